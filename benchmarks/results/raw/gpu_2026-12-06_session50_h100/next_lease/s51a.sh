#!/usr/bin/env bash
# Next lease, first call after staging (p6 with this): the whole GPU test suite, part 1 of 2.
# The CPU kernels and the CUDA batch kernel compile first, in parallel, into /tmp/cc (~250 s
# on a fresh machine: session 50's single pytest call was stopped mid-compile, s50b/s50d),
# then the 41 GPU tests of tests/compiled and tests/batch from that cache.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
timeout $((585 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider tests/compiled tests/batch \
  > $OUT/pytest_gpu_part1.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 4 $OUT/pytest_gpu_part1.log
