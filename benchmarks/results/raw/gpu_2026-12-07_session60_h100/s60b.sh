#!/usr/bin/env bash
# Session 60: the batch table (bench_batch) on the gen-tape tree, patterns on (default).
# Carry .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/ccg
mkdir -p /tmp/ccg && cp -rn $R/.stage/ccg/. /tmp/ccg/ 2>/dev/null
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/batch
timeout $((585 - SECONDS)) python -m benchmarks.bench_batch --device cuda --single-max 20 \
  --map-threads 16 --service-python-cpus 0 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? at ${SECONDS}s"; grep -E "ik|vdp_colloc" $OUT/bench_batch.log | tail -40
