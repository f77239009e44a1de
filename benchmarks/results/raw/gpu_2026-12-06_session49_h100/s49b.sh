#!/usr/bin/env bash
# Next lease, second call (same warm machine as s49a.sh, so /tmp/cc holds the kernels): the batch
# benchmark whose table RESULTS.md shows (benchmarks/results/batch/gpu: H200 at 701080c, before the
# 9af6051 slowdown and its fix).  Copy $OUT/batch_gpu/{meta.json,results.csv} into
# benchmarks/results/batch/gpu, edit meta.json's commit line, run python -m benchmarks.report.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/cc >/dev/null || exit 3
timeout 560 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --out $OUT/batch_gpu > $OUT/bench_batch.log 2>&1
echo "rc $? at ${SECONDS}s"; tail -n 30 $OUT/bench_batch.log
