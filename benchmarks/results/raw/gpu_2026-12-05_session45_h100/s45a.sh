#!/usr/bin/env bash
# session 45 call A: the CUDA batch kernel compiled at HEAD (Bunch-Kaufman, perturbation handler), then its GPU tests
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
git log --oneline -1 2>/dev/null | tee $OUT/commit.txt
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait
tail -2 $OUT/cpu_compile.log $OUT/cuda_compile.log
timeout 250 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch > $OUT/pytest_batch.log 2>&1; echo "batch rc $?"; tail -n 3 $OUT/pytest_batch.log
