#!/usr/bin/env bash
# session 29, second device run: cuDSS configurations on case78484 / case9241; case9241 timeline with the host waits
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONPYCACHEPREFIX=/tmp/pyc CUPY_CACHE_DIR=/tmp/cupy_s29b CASPAR_CACHE_DIR=/tmp/cc_b
python -c 'import cupy; cupy.zeros(1).sum()'
LIB=$(python -m benchmarks.cuda_counters build 2>$OUT/build.err | tail -1)
CASPAR_TIMELINE=3000000 LD_PRELOAD=$LIB timeout 100 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 1 --timeline $OUT/tl_9241.json > $OUT/e2e_9241.log 2>&1
python - $OUT/tl_9241.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); w = d["whole"]
print({k: (round(v, 4) if isinstance(v, float) else v) for k, v in w.items() if k not in ("top", "gaps", "waits")})
print(w["gaps"])
for t in w["waits"]: print(round(t["count"], 2), round(t["total_ms"], 4), round(t["mean_us"], 1), t["before"], "->", t["after"])
PY
timeout 330 python .gpurun/cudss_cfg.py case78484_epigrids '[{}, {"REORDERING_ALG": 1}, {"REORDERING_ALG": 2}, {"FACTORIZATION_ALG": 1}, {"FACTORIZATION_ALG": 2}, {"FACTORIZATION_ALG": 3}, {"USE_SUPERPANELS": 0}, {"ND_NLEVELS": 14}]' > $OUT/cfg_78484.log 2>&1; cat $OUT/cfg_78484.log | grep -v Warn | tail -40
timeout 120 python .gpurun/cudss_cfg.py case9241_pegase '[{}, {"REORDERING_ALG": 1}, {"REORDERING_ALG": 2}, {"FACTORIZATION_ALG": 1}, {"FACTORIZATION_ALG": 2}, {"FACTORIZATION_ALG": 3}]' > $OUT/cfg_9241.log 2>&1; cat $OUT/cfg_9241.log | grep -v Warn | tail -30
