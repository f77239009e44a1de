#!/usr/bin/env bash
# The must-show run of issue 21 on the GPU machine (the H200 when it is lent): the runner on
# case9241_pegase with CUPTI's counters (IPOPT beside it: ~40-55 s), then bench_e2e of
# case9241_pegase and case78484_epigrids on CUDA alone (no IPOPT: case78484's takes ~25 min)
# with three re-solves each -- the like-for-like "GPU solve" of the issue's baseline
# (bench_gpu_solver.py's later solve less cuDSS's analysis) is the re-solve.
# Carry .stage/x .stage/cc; the results come back as one archive ($OUT/s62b.tgz).
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/r/acopf
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
P=$(python -m benchmarks.cuda_counters build 2>$OUT/r/counters_build.log); echo "counters: $P"
LD_PRELOAD=$P timeout 240 python -m benchmarks --suite acopf --models case9241_pegase \
  --max-buses 100000 --device cuda --no-cpu --tol 1e-6 --out $OUT/r/acopf > $OUT/r/acopf.log 2>&1
echo "runner rc $? at ${SECONDS}s"; tail -n 3 $OUT/r/acopf.log
for c in case9241_pegase case78484_epigrids; do
  LD_PRELOAD=$P timeout $((560 - SECONDS)) python benchmarks/bench_e2e.py $c --device cuda --resolves 3 \
    2>$OUT/r/e2e_$c.err | grep E2E > $OUT/r/e2e_$c.log
  echo "$c rc $? at ${SECONDS}s"; python - $OUT/r/e2e_$c.log <<'PY'
import json, sys
d = json.loads(open(sys.argv[1]).read()[4:])
for k in ("first", "re1", "re2", "re3"):
    r = d[k]; ph = r["phases_ms"]
    print(k, round(r["seconds"], 3), r["iterations"], "setup", round(r["setup_s"], 3), "analysis",
          round(r["analysis_s"], 3), "eval/other", round(ph["function_evaluations"], 2),
          round(ph["other"], 2), "L/R", {k2: round(v, 1) for k2, v in r["counts"].items()})
PY
done
tar -czf $OUT/s62b.tgz -C $OUT r
