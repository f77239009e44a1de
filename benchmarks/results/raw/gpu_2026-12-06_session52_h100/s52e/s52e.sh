#!/usr/bin/env bash
# The batch table's Van der Pol row with solve_batch's launch at 32 lanes (IK shrunk: its
# rows are not the point here), IPOPT's sequential reference in the same run.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CUDA_LANES=${1:-32}
ls /tmp/site >/dev/null || exit 3
mkdir -p $OUT/batch
timeout 280 python -m benchmarks.bench_batch --device cuda --ik 100 --scaling 1 --requests 200 \
  --single-max 20 --no-map --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? lanes $CASPAR_CUDA_LANES at ${SECONDS}s"; grep -i "van der pol" $OUT/batch/*.md 2>/dev/null | head; tail -5 $OUT/bench_batch.log
