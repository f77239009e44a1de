#!/usr/bin/env bash
# session 47 call F: while three trees' kernels compile (HEAD, 179aea0, 87c1c41): Van der Pol collocation N=10000 and case1803_snem on the GPU general path
# with iteration logs; then the batch kernel HEAD vs 179aea0 on this card (IK 10^4, VdP 10^3), and HEAD's IK by threads per block
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled > $OUT/old_cpu_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/old_cuda_compile.log 2>&1 ) &
# session 38's tree (87c1c41: RESULTS.md's IK 10^4 0.035 s on an H200), archived as .stage/o87 like .stage/old
( cd .stage/o87 && CASPAR_CACHE_DIR=/tmp/cc_o87 PYTHONPATH=$ROOT/.stage/o87:$PYTHONPATH python -m caspar_backend.compiled > $OUT/o87_cpu_compile.log 2>&1 ) &
( cd .stage/o87 && CASPAR_CACHE_DIR=/tmp/cc_o87 PYTHONPATH=$ROOT/.stage/o87:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/o87_cuda_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc_diag PYTHONPATH=$ROOT:$PYTHONPATH timeout 150 python .stage/run/acopf_diag.py case1803_snem cuda > $OUT/acopf_diag.log 2>&1 ) &
CASPAR_CACHE_DIR=/tmp/cc_diag2 PYTHONPATH=$ROOT:$PYTHONPATH timeout 190 python .stage/run/vdp_diag.py 10000 cuda > $OUT/vdp_diag.log 2>&1; echo "vdp diag rc $? at ${SECONDS}s"; grep -E "^(ipopt|cuda|cpu) " $OUT/vdp_diag.log
wait
cat $OUT/acopf_diag.log | tail -n 4
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
# HEAD's CUDA batch kernel since 8301758 hands an iteration over on an impossible inertia (device code moved)
CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 150 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch > $OUT/pytest_batch.log 2>&1; echo "batch rc $? at ${SECONDS}s"; tail -n 2 $OUT/pytest_batch.log
for round in 1 2; do for tree in new old o87; do
  case $tree in old) D=$ROOT/.stage/old; C=/tmp/cc_old;; o87) D=$ROOT/.stage/o87; C=/tmp/cc_o87;; *) D=$ROOT; C=/tmp/cc;; esac
  for c in "ik --sizes 10000" "vdp --sizes 1000"; do
    [ $SECONDS -gt 480 ] && continue
    ( cd $D && CASPAR_CACHE_DIR=$C PYTHONPATH=$D:$PYTHONPATH timeout 45 python benchmarks/bench_kernel_latency.py --case $c --repeats 3 2>> $OUT/latency_err_$tree.log | sed "s/^/$tree r$round /" | tee -a $OUT/latency.txt )
  done
done; done
[ $SECONDS -lt 500 ] && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 60 python benchmarks/bench_kernel_latency.py --case ik --sizes 10000 --repeats 3 --threads 1,4,8,32 2>> $OUT/latency_err_new.log | tee -a $OUT/threads.txt
echo "done at ${SECONDS}s"
