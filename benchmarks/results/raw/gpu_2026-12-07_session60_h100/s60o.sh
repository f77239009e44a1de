#!/usr/bin/env bash
# Session 60: issue 21's AC-OPF on the gen-tape tree: case9241_pegase and case78484_epigrids
# on CUDA with CUPTI's counters (launches, host reads per iteration).  Carry .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_CACHE_DIR=/tmp/ccg
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
mkdir -p $OUT/acopf
P=$(python -m benchmarks.cuda_counters build 2>$OUT/counters_build.log); echo "counters: $P"
LD_PRELOAD=$P timeout $((590 - SECONDS)) python -m benchmarks --suite acopf \
  --models case9241_pegase,case78484_epigrids --max-buses 100000 --device cuda --no-cpu --tol 1e-6 \
  --out $OUT/acopf > $OUT/acopf.log 2>&1
echo "rc $? at ${SECONDS}s"; tail -n 30 $OUT/acopf.log
