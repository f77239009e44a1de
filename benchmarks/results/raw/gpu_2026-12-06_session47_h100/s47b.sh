#!/usr/bin/env bash
# session 47 call B: the device path's GPU tests at HEAD (solver, kkt, adapters)
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$PWD:$PYTHONPATH
timeout 560 python -m pytest -q -m gpu -p no:cacheprovider tests/solver tests/kkt tests/adapters > $OUT/pytest_solver.log 2>&1; echo "solver rc $? at ${SECONDS}s"; tail -n 4 $OUT/pytest_solver.log
