#!/usr/bin/env bash
# GPU tests of the general path (CuPy): the restoration changes of session 42, the
# least-squares duals of session 41 (xp-generic)
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
timeout 560 python -m pytest -q -m gpu tests/solver tests/kkt/test_condensed_kkt.py tests/kkt/test_cudss_ordering.py tests/kkt/test_cudss_handle.py 2>&1 | tail -15 | tee $OUT/pytest_gpu_solver.log
