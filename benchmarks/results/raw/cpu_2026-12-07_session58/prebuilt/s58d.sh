#!/usr/bin/env bash
# After staging p1..p5 on the same warm machine: p6 installs the staged wheels, then
# `pytest -m gpu` (the batch kernel's tests first, then the rest) with the CUDA kernels
# prebuilt on the VM in .stage/cc (no NVVM/ptxas on the device).  Carry .stage/p6,
# .stage/cc.
bash .stage/p6/install.sh > $OUT/install.log 2>&1 || { tail -3 $OUT/install.log; exit 3; }
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
mkdir -p /tmp/cc && cp -rn $PWD/.stage/cc/. /tmp/cc/
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
timeout 280 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py \
  tests/compiled/test_cuda_prebuilt.py -rf > $OUT/pytest_batch.log 2>&1
echo "batch pytest rc $? at ${SECONDS}s"; grep -v Warn $OUT/pytest_batch.log | tail -n 4
timeout $((585 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider tests \
  --ignore=tests/compiled/test_cuda_batch.py --ignore=tests/compiled/test_cuda_prebuilt.py \
  -rf > $OUT/pytest_rest.log 2>&1
echo "rest pytest rc $? at ${SECONDS}s"; grep -v Warn $OUT/pytest_rest.log | tail -n 6
