#!/usr/bin/env bash
# Next lease, only if s52a shows the teams paying (same warm machine, kernels in /tmp/cc):
# the batch table (RESULTS.md "Batched solves") with solve_batch's launch at LANES threads
# per instance -- bash .stage/run/s52c.sh 32 (or the best of s52a).  IPOPT's sequential
# references run in the same call (~300-450 s in all: session 31's run took 480 s at most).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CUDA_LANES=${1:-32}
ls /tmp/site >/dev/null || exit 3
mkdir -p $OUT/batch
timeout 570 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? lanes $CASPAR_CUDA_LANES at ${SECONDS}s"; tail -30 $OUT/bench_batch.log
