#!/usr/bin/env bash
# The batch table in full at the teams rule (launch_lanes: 32 for Van der Pol N = 50, 1 for the IK).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
mkdir -p $OUT/batch
timeout 570 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? lanes rule at ${SECONDS}s"; tail -30 $OUT/bench_batch.log
