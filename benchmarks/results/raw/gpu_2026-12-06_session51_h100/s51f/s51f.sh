#!/usr/bin/env bash
# Main's CUDA build (A) against the batched-loads build (B), same machine, interleaved
# (s51e's comparison, whose main-build runs recompiled: both builds shared numba-cuda's
# index file, and the last build to save dropped the other's entry; here each build has its
# own cache directory).  Both compiled in parallel, then turns A1 B1 A2 B2 A3 B3.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
rm -f /tmp/turn*
for bl in 0 1; do
  ( CASPAR_CACHE_DIR=/tmp/cc$bl python -m caspar_backend.compiled > $OUT/cpu$bl.log 2>&1 ) &
  ( CASPAR_CACHE_DIR=/tmp/cc$bl CASPAR_CUDA_BATCHED_LOADS=$bl python -m caspar_backend.compiled --cuda > $OUT/cuda$bl.log 2>&1 ) &
done
wait
echo "compiled at ${SECONDS}s"
CASPAR_CACHE_DIR=/tmp/cc1 CASPAR_CUDA_BATCHED_LOADS=1 python .stage/run/ab_latency.py B /tmp/turn 3 2> $OUT/B.err \
  | sed 's/^{/{"batched_loads": 1, /' > $OUT/B.txt &
CASPAR_CACHE_DIR=/tmp/cc0 CASPAR_CUDA_BATCHED_LOADS=0 python .stage/run/ab_latency.py A /tmp/turn 3 2> $OUT/A.err \
  | sed 's/^{/{"batched_loads": 0, /' > $OUT/A.txt &
wait
cat $OUT/A.err $OUT/B.err | grep "^#"; cat $OUT/A.txt $OUT/B.txt
echo "done at ${SECONDS}s"
