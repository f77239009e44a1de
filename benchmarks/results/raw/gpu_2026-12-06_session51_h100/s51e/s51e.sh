#!/usr/bin/env bash
# Next lease, a call of its own (~450-580 s): the CUDA batch kernel built with batched loads
# (CASPAR_CUDA_BATCHED_LOADS=1: caspar_backend/compiled/cuda/batched_loads.py; 118 of the
# kernels' loops -- elementwise, and scatters whose four targets differ -- issue four
# elements' loads before their stores; its compile ~1.4x main's on the VM) against main's
# build, on the same machine: Van der Pol N = 50 B = 1,000 (s49a: 308-327 ms, 15.4 ms per
# iteration of the slowest instance) and IK 10^4 (33.6-37.9 ms), interleaved twice; the
# same iterations and objective sums are expected (the same operations, per element, in
# the same order); then the batch kernel's GPU tests with the rewrite on.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( CASPAR_CUDA_BATCHED_LOADS=0 python -m caspar_backend.compiled --cuda > $OUT/cuda_main_compile.log 2>&1 ) &
( CASPAR_CUDA_BATCHED_LOADS=1 python -m caspar_backend.compiled --cuda > $OUT/cuda_bl_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
for rep in 1 2; do
  for bl in 0 1; do
    for c in "vdp --sizes 1000" "ik --sizes 10000"; do
      CASPAR_CUDA_BATCHED_LOADS=$bl timeout 90 python benchmarks/bench_kernel_latency.py --case $c \
        --repeats 3 2>/dev/null | sed "s/^{/{\"batched_loads\": $bl, /" | tee -a $OUT/latency.txt
    done
  done
done
echo "timed at ${SECONDS}s"
[ $SECONDS -lt 430 ] && CASPAR_CUDA_BATCHED_LOADS=1 timeout $((570 - SECONDS)) python -m pytest -q -m gpu \
  -p no:cacheprovider tests/compiled/test_cuda_batch.py tests/batch > $OUT/pytest_bl.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_bl.log
