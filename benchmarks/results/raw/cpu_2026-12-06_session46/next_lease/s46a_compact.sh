#!/usr/bin/env bash
# session 46 call A (compact): the CUDA batch kernel compiled at HEAD (register-allocated tapes), then its GPU tests
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$PWD:$PYTHONPATH
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
git log --oneline -1 2>/dev/null | tee $OUT/commit.txt
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait
tail -n 1 $OUT/*compile.log
python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py > $OUT/pytest_cuda_batch.log 2>&1; echo "cuda_batch rc $?"; tail -n 2 $OUT/pytest_cuda_batch.log
timeout 40 python benchmarks/bench_kernel_latency.py --case ik --sizes 10000 --repeats 3 2>> $OUT/latency_err.log | tee -a $OUT/latency.txt
