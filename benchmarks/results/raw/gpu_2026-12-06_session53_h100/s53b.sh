#!/usr/bin/env bash
# Next lease, after s53a on the same machine (~400-500 s): the CUDA kernel compiled, then
# the teams with the refinement's vector work, J^T y and the finiteness checks shared too
# (kernels/refine_parts.py, slack_nlp.aty_part, kernels/check_parts.py) against one thread -- Van der Pol N = 50, B = 1,000 and 132 (session 52, H100, before
# the refinement jobs: 319 / 249 ms at 1 / 32 lanes, B = 132 257 / 206), IK 10^4 at one
# lane (46.9 ms) -- and the batch kernel's GPU tests (the team test at 4 and 32 lanes).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/cuda_compile.log
L="timeout 120 python benchmarks/bench_kernel_latency.py --repeats 3"
$L --case vdp --sizes 1000 --lanes 1,32,16 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case vdp --sizes 132 --lanes 1,32 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case ik --sizes 10000 --lanes 1 2>&1 | grep "^{" | tee -a $OUT/latency.txt
$L --case vdp --sizes 1000 --lanes 32,1 2>&1 | grep "^{" | tee -a $OUT/latency.txt
echo "timed at ${SECONDS}s"
[ $SECONDS -lt 480 ] && timeout $((585 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider \
  tests/compiled/test_cuda_batch.py > $OUT/pytest_batch.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_batch.log
