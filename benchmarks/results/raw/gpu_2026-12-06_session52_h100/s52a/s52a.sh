#!/usr/bin/env bash
# Next lease, first call after staging (~450-580 s): the CUDA kernel's teams
# (caspar_backend/compiled/cuda/team.py: lanes threads of a warp per instance, K's assembly,
# K x and the evaluations' groups split over them) against one thread per instance, the same kernel and machine.
# CPU and CUDA kernels compiled in parallel; then the kernel alone (bench_kernel_latency)
# Van der Pol N = 50, B = 1,000 at lanes 1, 4, 8, 16, 32 (session 51, H100: 309.6-313.3 ms
# at one lane), B = 132 at 1 and 32, IK 10^4 at 1, 2, 4 (36.8-38.1 ms); each line checks
# the kernel's answers against solve_batch's (one lane); then the batch kernel's GPU tests
# (the team test among them) with what time is left.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*compile.log
L="timeout 120 python benchmarks/bench_kernel_latency.py --repeats 3"
$L --case vdp --sizes 1000 --lanes 1,4,8,16,32 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case vdp --sizes 132 --lanes 1,32 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case ik --sizes 10000 --lanes 1,2,4 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case vdp --sizes 1000 --lanes 32,1 2>&1 | grep "^{" | tee -a $OUT/latency.txt
# solve_batch itself with teams (its solve_batch_s; cuda/group.launch_lanes)
CASPAR_CUDA_LANES=32 $L --case vdp --sizes 1000 --lanes 32 2>&1 | grep "^{" \
  | sed 's/^{/{"solve_batch_lanes": 32, /' | tee -a $OUT/latency.txt
echo "timed at ${SECONDS}s"
[ $SECONDS -lt 480 ] && timeout $((585 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider \
  tests/compiled/test_cuda_batch.py > $OUT/pytest_batch.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_batch.log
