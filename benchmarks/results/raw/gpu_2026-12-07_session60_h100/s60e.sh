#!/usr/bin/env bash
# Session 60: bench_e2e case78484_epigrids and case9241_pegase on CUDA (no IPOPT), counters
# preloaded.  Carry .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_CACHE_DIR=/tmp/ccg
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
P=/tmp/ccg/libcaspar_counters.so
for c in case78484_epigrids case9241_pegase; do
LD_PRELOAD=$P timeout $((560 - SECONDS)) python benchmarks/bench_e2e.py $c --device cuda --resolves 2 \
  2>$OUT/e2e_$c.err | grep E2E | tee $OUT/e2e_$c.log | cut -c1-1500
echo "rc $? at ${SECONDS}s"
done
