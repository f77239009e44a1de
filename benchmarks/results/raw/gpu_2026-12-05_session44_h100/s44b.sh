#!/usr/bin/env bash
# session 44 call B: pytest -m gpu on the general path and the fused kernels
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
timeout 500 python -m pytest -q -m gpu -p no:cacheprovider tests/solver tests/kkt tests/adapters tests/compiled/test_cuda_loops.py > $OUT/pytest_rest.log 2>&1; echo "rest rc $?"; tail -n 5 $OUT/pytest_rest.log
