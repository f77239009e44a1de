#!/usr/bin/env bash
# After s56a/s56b and staging p1..p5 on the same warm machine (this tree's CUDA kernel in
# /tmp/cc): p6 installs the staged wheels, then the batch kernel's GPU tests (session 53:
# 13 passed in ~94 s with a warm cache).
bash .stage/p6/install.sh > $OUT/install.log 2>&1 || { tail -3 $OUT/install.log; exit 3; }
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
timeout 560 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py \
  -rf > $OUT/pytest_batch.log 2>&1
echo "batch pytest rc $? at ${SECONDS}s"; grep -v Warn $OUT/pytest_batch.log | tail -n 4
