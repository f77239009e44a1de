#!/usr/bin/env bash
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
timeout 250 python .stage/run/s42d.py 2>&1 | grep -v Warn | tee $OUT/adaptive_cuda.log | tail -40
timeout 300 python -m pytest -q -m gpu tests/solver tests/kkt/test_condensed_kkt.py 2>&1 | tail -4 | tee $OUT/pytest_gpu_solver_final.log
