#!/usr/bin/env bash
# Session 61 call C: nvmath and the staged packages byte-compiled as a pip install leaves them
# (gpu-stage installs with --no-compile); fresh-process imports again; bench_e2e case9241 and
# case78484 on CUDA (no IPOPT), counters preloaded, bytecode written as a user's Python does.
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site > /dev/null 2>&1; echo "compileall at ${SECONDS}s"
for m in nvmath.bindings.cudss; do
  for k in 1 2 3; do python -c "import time; t=time.perf_counter(); import cupy; t1=time.perf_counter(); import $m; print('import cupy', round(t1-t,3), '$m', round(time.perf_counter()-t1,3))"; done
done 2>&1 | tee $OUT/imports_compiled.txt
P=/tmp/cc/libcaspar_counters.so; ls $P || P=$(python -m benchmarks.cuda_counters build 2>$OUT/counters_build.log)
for c in case9241_pegase case78484_epigrids; do
LD_PRELOAD=$P timeout $((585 - SECONDS)) python benchmarks/bench_e2e.py $c --device cuda --resolves 2 \
  2>$OUT/e2e_$c.err | grep E2E | tee $OUT/e2e_$c.log | cut -c1-900
echo "rc $? at ${SECONDS}s"
done
