#!/usr/bin/env bash
# Next lease, on the same warm machine after s52a (kernels in /tmp/cc): the rest of the
# GPU suite (session 51: tests/compiled + tests/batch 41 passed in 94 s, the rest 380
# passed in 218 s, from a warm cache).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
timeout 580 python -m pytest -q -m gpu -p no:cacheprovider tests \
  --ignore=tests/compiled/test_cuda_batch.py -rf > $OUT/pytest_rest.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; grep -v Warn $OUT/pytest_rest.log | tail -n 5
