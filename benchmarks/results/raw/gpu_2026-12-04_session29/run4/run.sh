#!/usr/bin/env bash
# session 29, fourth device run: pytest -m gpu on the final tree; case78484 / case9241 re-solves; PGLib 500-2,000 typ vs IPOPT
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONPYCACHEPREFIX=/tmp/pyc CUPY_CACHE_DIR=/tmp/cupy_s29d
git log --oneline -1 2>/dev/null; python -c 'import cupy; cupy.zeros(1).sum()'
LIB=$(python -m benchmarks.cuda_counters build 2>$OUT/build.err | tail -1)
timeout 330 python -m pytest -q -m gpu -p no:cacheprovider -x > $OUT/gpu_tests.log 2>&1; echo "pytest rc $?"; tail -3 $OUT/gpu_tests.log
show() { python - $1 <<'PY'
import json, sys
d = json.loads([l for l in open(sys.argv[1]) if l.startswith("E2E ")][-1][4:])
print(d["case"], "build_s", round(d["build_s"], 2))
for k in [k for k in d if k == "first" or k.startswith("re")]:
    r = d[k]; print(k, round(r["seconds"], 3), r["status"], r["iterations"], r["f"], "setup", round(r["setup_s"], 3), {a: round(b, 3) for a, b in r["phases_ms"].items()}, r["counts"])
PY
}
timeout 150 python benchmarks/bench_e2e.py case78484_epigrids --device cuda --resolves 3 --cache-dir /tmp/cc_d > $OUT/e2e_78484.log 2>&1; show $OUT/e2e_78484.log
timeout 60 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 --cache-dir /tmp/cc_d > $OUT/e2e_9241.log 2>&1; show $OUT/e2e_9241.log
LD_PRELOAD=$LIB timeout 60 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 2 --cache-dir /tmp/cc_d > $OUT/e2e_9241_counted.log 2>&1; show $OUT/e2e_9241_counted.log
LD_PRELOAD=$LIB timeout 200 python -m benchmarks --suite acopf --min-buses 500 --max-buses 2000 --variants typ --device cuda --no-cpu --tol 1e-6 --time-limit 120 --out $OUT/acopf_500_2000 > $OUT/acopf.log 2>&1; tail -14 $OUT/acopf.log | cut -c1-250
