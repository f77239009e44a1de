#!/usr/bin/env bash
# session 45 call B: the device path's solver, KKT and adapter GPU tests (perturbation handler, small K)
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
timeout 520 python -m pytest -q -m gpu -p no:cacheprovider tests/solver tests/kkt tests/adapters tests/compiled/test_cuda_loops.py > $OUT/pytest_solver.log 2>&1; echo "solver rc $?"; tail -n 5 $OUT/pytest_solver.log
