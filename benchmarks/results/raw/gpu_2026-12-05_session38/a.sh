#!/usr/bin/env bash
# Call A: compile the branch's CUDA kernel and the CPU kernels, its CUDA tests, the kernel's latency.
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
nvidia-smi -L; python -c "import numba, numba_cuda, cupy; print(numba.__version__, cupy.__version__)" 2>&1 | tail -1
git_head=87c1c41; echo "tree: branch s34-while-loops merged with main ($git_head)"
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait
cat $OUT/cpu_compile.log $OUT/cuda_compile.log
timeout 120 python benchmarks/bench_kernel_latency.py --case vdp --sizes 1,132,1000 --repeats 3 > $OUT/vdp_kernel.jsonl 2> $OUT/vdp_kernel.err; echo "vdp rc $?"
timeout 60 python benchmarks/bench_kernel_latency.py --case ik --sizes 1,32,10000 --repeats 3 > $OUT/ik_kernel.jsonl 2> $OUT/ik_kernel.err; echo "ik rc $?"
cut -c1-400 $OUT/vdp_kernel.jsonl $OUT/ik_kernel.jsonl; tail -3 $OUT/vdp_kernel.err
timeout 200 python -m pytest -q -m gpu tests/compiled/test_cuda_loops.py tests/compiled/test_cuda_batch.py -p no:cacheprovider > $OUT/pytest_cuda.log 2>&1; echo "pytest rc $?"; tail -5 $OUT/pytest_cuda.log
