#!/usr/bin/env bash
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1 CASPAR_CUDSS_ORDERINGS=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 300 python .stage/run/perm.py case9241_pegase 2>&1 | grep -v Warn | tee $OUT/perm_9241.log | cut -c1-1500
# a second process: the ordering from the disk store
LIB=$(python -m benchmarks.cuda_counters build 2>$OUT/counters_build.err)
LD_PRELOAD=$LIB timeout 200 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 2 > $OUT/e2e_9241.log 2>&1; echo "e2e rc $?"
grep E2E $OUT/e2e_9241.log | cut -c1-1500
timeout 60 python -m pytest -q -m gpu tests/kkt/test_cudss_ordering.py tests/kkt/test_cudss_handle.py 2>&1 | tail -3
