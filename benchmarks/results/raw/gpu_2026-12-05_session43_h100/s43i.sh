#!/usr/bin/env bash
export CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
ROOT=$PWD
LIB=$(PYTHONPATH=$ROOT:$PYTHONPATH python -m benchmarks.cuda_counters build 2>/dev/null | tail -1)
for k in 1 2; do
  (cd $ROOT/.stage/old && PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH LD_PRELOAD=$LIB CASPAR_CACHE_DIR=/tmp/cc_old timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>$OUT/old_err_$k.log | grep E2E | sed 's/^/OLD /' | tee -a $OUT/e2e_9241c.log)
  (cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH LD_PRELOAD=$LIB timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/NEW /' | tee -a $OUT/e2e_9241c.log)
done
tail -3 $OUT/old_err_1.log
