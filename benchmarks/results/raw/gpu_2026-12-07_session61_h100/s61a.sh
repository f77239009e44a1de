#!/usr/bin/env bash
# Session 61 call A: import costs in fresh processes, then `pytest -m gpu tests -n 6` on main.
# Carry .stage/x .stage/cc.
source .stage/x/env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for m in cupy nvmath nvmath.bindings.cudss caspar_backend; do
  for k in 1 2; do python -c "import time; t=time.perf_counter(); import $m; print('import $m', round(time.perf_counter()-t,3))"; done
done 2>&1 | tee $OUT/imports.txt
python -X importtime -c "import nvmath.bindings.cudss" 2> $OUT/importtime_nvmath.txt
sort -t'|' -k2 -n -r $OUT/importtime_nvmath.txt | head -12
timeout 120 python .stage/x/gil_probe.py 2>&1 | tee $OUT/gil_probe.log | tail -4
timeout $((575 - SECONDS)) python -m pytest -m gpu tests -v -rfE -n ${N:-6} -p no:cacheprovider --durations=30 > $OUT/pytest_gpu.log 2>&1
echo "rc $? at ${SECONDS}s"; tail -n 30 $OUT/pytest_gpu.log
