#!/usr/bin/env bash
# Session 59: the batch table (bench_batch --device cuda, session 56's s56e arguments) on
# branch straight-ldl (.stage/sl, kernels + extern state in .stage/ccs) with
# CASPAR_CUDA_PATTERNS=${PAT:-1}.  Carry .stage/x .stage/sl .stage/ccs.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/ccs CASPAR_CUDA_PATTERNS=${PAT:-1}
mkdir -p /tmp/ccs && cp -rn $R/.stage/ccs/. /tmp/ccs/
cd $R/.stage/sl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/batch
timeout $((585 - SECONDS)) python -m benchmarks.bench_batch --device cuda --single-max 20 \
  --map-threads 16 --service-python-cpus 0 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? at ${SECONDS}s"; grep -E "ik|vdp_colloc" $OUT/bench_batch.log | tail -40
