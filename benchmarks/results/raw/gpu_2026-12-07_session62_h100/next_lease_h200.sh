#!/usr/bin/env bash
# issue 21's H200 must-shows, lean (no IPOPT): bench_e2e re-solves of case9241_pegase and
# case78484_epigrids with CUPTI's counters.  Only on an H200.  $OUT/s62f.tgz.
grep -q H200 <(nvidia-smi --query-gpu=name --format=csv,noheader) || { echo "not an H200"; exit 0; }
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/f
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/f/gpu.txt
P=$(python -m benchmarks.cuda_counters build 2>/dev/null)
for c in case9241_pegase case78484_epigrids; do
  LD_PRELOAD=$P timeout $((200 - SECONDS)) python benchmarks/bench_e2e.py $c --device cuda --resolves 3 \
    2>$OUT/f/e2e_$c.err | grep E2E > $OUT/f/e2e_$c.log
  echo "$c rc $? at ${SECONDS}s"
done
tar -czf $OUT/s62f.tgz -C $OUT f
