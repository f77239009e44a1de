#!/usr/bin/env bash
# session 43: cuDSS tree probe; the GPU checks owed since session 42
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
timeout 150 python .stage/run/s43a.py 2>&1 | grep -v Warning | tee $OUT/tree_probe.log
timeout 120 python .stage/run/s42e.py 2>&1 | tail -12 | tee $OUT/lbfgs_cuda.log
timeout 280 python -m pytest -q -x -m gpu tests/solver tests/kkt/test_condensed_kkt.py -p no:cacheprovider 2>&1 | tail -15 | tee $OUT/pytest_gpu_solver.log
