#!/usr/bin/env bash
# session 43: the GPU iteration's host operations cut (this tree) against 91e338c (.stage/old),
# case9241_pegase end to end with CUPTI's counts, alternating; then the GPU tests
export CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
ROOT=$PWD
LIB=$(PYTHONPATH=$ROOT:$PYTHONPATH python -m benchmarks.cuda_counters build 2>/dev/null | tail -1)
echo "counters: $LIB" | tee $OUT/e2e_9241.log
for k in 1 2; do
  (cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH LD_PRELOAD=$LIB timeout 120 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/NEW /' | tee -a $OUT/e2e_9241.log)
  (cd $ROOT/.stage/old && PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH LD_PRELOAD=$LIB timeout 120 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/OLD /' | tee -a $OUT/e2e_9241.log)
done
export PYTHONPATH=$ROOT:$PYTHONPATH
timeout 250 python -m pytest -q -x -m gpu tests/kkt/test_fused_kernels.py tests/solver tests/kkt/test_condensed_kkt.py -p no:cacheprovider 2>&1 | tail -6 | tee $OUT/pytest_gpu.log
