#!/usr/bin/env bash
# Next lease, first call after staging (p6 with this): the CUDA kernel with the barrier update's
# one-exit loop (session 48).  Copy this directory to .stage/run/ and run
#   bash .stage/p6/install.sh && export PYTHONPATH=/tmp/site:$PYTHONPATH \
#     LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH && bash .stage/run/s49a.sh
# (carry .stage/p6 .stage/run).  Expected: ms per slowest-instance iteration flat in B (b0c3f53:
# 0.45-0.69), IK 10^4 ~0.034 s, the batch GPU tests passing.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
ROOT=$PWD
export PYTHONPATH=$ROOT:$PYTHONPATH
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
git log --oneline -1 2>/dev/null | tee $OUT/head.txt
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
# the columns kernel too (instances in columns: a warp's loads of one entry coalesced), never
# timed on a GPU; with a warp's threads reconverging it may pay from B ~ 4,000 on
( python -c "from caspar_backend.compiled.cuda.launch import kernel; kernel(True)" > $OUT/cuda_columns_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
timeout 90 python .stage/run/s48c_l1.py ik 1000,2500,5000,10000,20000 rows 2>/dev/null | tee $OUT/sizes.txt
timeout 60 python benchmarks/bench_kernel_latency.py --case ik --sizes 10000 --repeats 3 2>/dev/null | tee $OUT/latency.txt
timeout 60 python benchmarks/bench_kernel_latency.py --case vdp --sizes 1000 --repeats 3 2>/dev/null | tee -a $OUT/latency.txt
timeout 240 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch > $OUT/pytest_batch.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_batch.log
for c in "vdp --sizes 1000,4000" "ik --sizes 10000"; do
  timeout 90 python benchmarks/bench_kernel_latency.py --case $c --repeats 2 --threads 1,8,32 2>/dev/null | tee -a $OUT/threads_rows.txt
  timeout 90 python benchmarks/bench_kernel_latency.py --case $c --repeats 2 --threads 1,8,32 --columns 2>/dev/null | tee -a $OUT/threads_columns.txt
done
echo "done at ${SECONDS}s"
