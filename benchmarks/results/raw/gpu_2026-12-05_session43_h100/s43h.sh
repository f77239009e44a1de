#!/usr/bin/env bash
export CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
ROOT=$PWD
ls $ROOT/.stage/old | head -3
LIB=$(PYTHONPATH=$ROOT:$PYTHONPATH python -m benchmarks.cuda_counters build 2>/dev/null | tail -1)
for k in 1 2; do
  (cd $ROOT/.stage/old && PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH LD_PRELOAD=$LIB CASPAR_CACHE_DIR=/tmp/cc_old timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>$OUT/old_err_$k.log | grep E2E | sed 's/^/OLD /' | tee -a $OUT/e2e_9241b.log)
  (cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH LD_PRELOAD=$LIB timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/NEW /' | tee -a $OUT/e2e_9241b.log)
done
tail -5 $OUT/old_err_1.log
export PYTHONPATH=$ROOT:$PYTHONPATH
timeout 200 python -m pytest -q -m gpu tests/kkt/test_fused_kernels.py tests/solver tests/kkt/test_condensed_kkt.py -p no:cacheprovider 2>&1 | tail -8 | tee $OUT/pytest_gpu2.log
