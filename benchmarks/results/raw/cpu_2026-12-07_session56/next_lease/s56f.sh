#!/usr/bin/env bash
# After s56d (staged): the rest of `pytest -m gpu` (session 53: 410 passed, 6 skipped,
# 1 xfailed in ~220 s).
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
ls /tmp/site >/dev/null || exit 3
timeout 580 python -m pytest -q -m gpu -p no:cacheprovider tests \
  --ignore=tests/compiled/test_cuda_batch.py -rf > $OUT/pytest_rest.log 2>&1
echo "rest pytest rc $? at ${SECONDS}s"; grep -v Warn $OUT/pytest_rest.log | tail -n 6
