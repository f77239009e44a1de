#!/usr/bin/env bash
# session 47 call A: both trees' kernels compiled (HEAD and 179aea0), HEAD's batch GPU tests, then the batch kernel HEAD vs 179aea0 on this card
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled > $OUT/old_cpu_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/old_cuda_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/*compile.log
CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 150 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch tests/compiled/test_cuda_loops.py > $OUT/pytest_batch.log 2>&1; echo "batch rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_batch.log
for round in 1 2; do for tree in new old; do
  if [ $tree = old ]; then D=$ROOT/.stage/old; C=/tmp/cc_old; else D=$ROOT; C=/tmp/cc; fi
  for c in "ik --sizes 10000" "vdp --sizes 1000"; do
    [ $SECONDS -gt 540 ] && continue
    ( cd $D && CASPAR_CACHE_DIR=$C PYTHONPATH=$D:$PYTHONPATH timeout 45 python benchmarks/bench_kernel_latency.py --case $c --repeats 3 2>> $OUT/latency_err_$tree.log | sed "s/^/$tree r$round /" | tee -a $OUT/latency.txt )
  done
done; done
echo "done at ${SECONDS}s"
