#!/usr/bin/env bash
# Session 40, call A: pytest -m gpu over tests/solver and tests/kkt (the GPU general path, its
# restoration phase with kkt/elastic.py on CuPy + cuDSS); no kernel compile (not needed there).
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=name --format=csv,noheader; git log --oneline -1 2>/dev/null | cat
timeout 420 python -m pytest -q -m gpu -p no:cacheprovider tests/solver tests/kkt \
  > $OUT/pytest_solver_kkt.log 2>&1; echo "solver/kkt rc $?"; tail -n 15 $OUT/pytest_solver_kkt.log
