#!/usr/bin/env bash
# Next lease, after s50a.sh: the whole GPU test suite at HEAD (session 49 ran it outside
# tests/compiled and tests/batch after 0e4306d: 380 passed; the batch kernel's own tests
# passed at 5110152, s49a).  The CUDA batch kernel compiles first (~250 s on a fresh machine),
# so this call needs most of its 600 s.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
timeout 580 python -m pytest -q -m gpu -p no:cacheprovider tests > $OUT/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 6 $OUT/pytest_gpu.log
