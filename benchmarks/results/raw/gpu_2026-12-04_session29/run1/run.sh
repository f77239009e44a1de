#!/usr/bin/env bash
# session 29, first device run: the s28-device-setup merge's GPU tests, case78484 re-solves, case9241 device timeline
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONPYCACHEPREFIX=/tmp/pyc CUPY_CACHE_DIR=/tmp/cupy_s29a
python -c 'import cupy; cupy.zeros(1).sum()'
LIB=$(python -m benchmarks.cuda_counters build 2>$OUT/build.err | tail -1); echo "lib $LIB"; nm -D $LIB | grep -c timeline
timeout 200 python -m pytest -q -m gpu tests/kkt/test_fused_kernels.py tests/solver/test_gpu_solver.py tests/test_gpu_warmup.py -p no:cacheprovider > $OUT/gpu_tests.log 2>&1; tail -3 $OUT/gpu_tests.log
show() { python - $1 <<'PY'
import json, sys
d = json.loads([l for l in open(sys.argv[1]) if l.startswith("E2E ")][-1][4:])
print("build_s", round(d["build_s"], 2))
for k in [k for k in d if k == "first" or k.startswith("re")]:
    r = d[k]; print(k, round(r["seconds"], 3), r["status"], r["iterations"], r["f"], "setup", round(r["setup_s"], 3), {a: round(b, 3) for a, b in r["phases_ms"].items()}, r["counts"])
for k in ("profiled", "timeline"):
    if k in d: print(k, d[k])
PY
}
timeout 200 python benchmarks/bench_e2e.py case78484_epigrids --device cuda --resolves 3 --cache-dir /tmp/cc_a --profile $OUT/prof_78484.txt > $OUT/e2e_78484.log 2>&1; show $OUT/e2e_78484.log
CASPAR_TIMELINE=3000000 LD_PRELOAD=$LIB timeout 100 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 2 --cache-dir /tmp/cc_a --timeline $OUT/tl_9241.json > $OUT/e2e_9241.log 2>&1; show $OUT/e2e_9241.log; tail -3 $OUT/e2e_9241.log | cut -c1-300
python - $OUT/tl_9241.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); w = d["whole"]
print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in w.items() if k not in ("top", "gaps")})
print(w["gaps"])
for t in w["top"]: print(round(t["count"], 2), round(t["total_ms"], 4), round(t["mean_us"], 1), t["name"][:90])
PY
