#!/usr/bin/env bash
# session 43 final: GPU tests at the session's HEAD; case9241 re-solves against 91e338c
# (alternating, CUPTI's counts); case78484's re-solves
export CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu_final.txt
LIB=$(PYTHONPATH=$ROOT:$PYTHONPATH python -m benchmarks.cuda_counters build 2>/dev/null | tail -1)
(PYTHONPATH=$ROOT:$PYTHONPATH timeout 200 python -m pytest -q -m gpu tests/kkt/test_fused_kernels.py tests/solver tests/kkt/test_condensed_kkt.py tests/kkt/test_cudss_handle.py -p no:cacheprovider 2>&1 | tail -4 | tee $OUT/pytest_gpu_final.log)
for k in 1 2; do
  (cd $ROOT/.stage/old && PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH LD_PRELOAD=$LIB CASPAR_CACHE_DIR=/tmp/cc_old timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/OLD /' >> $OUT/e2e_9241_final.log)
  (cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH LD_PRELOAD=$LIB timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/NEW /' >> $OUT/e2e_9241_final.log)
done
python - $OUT/e2e_9241_final.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    tag = line.split()[0]; d = json.loads(line[line.index('{'):])
    for k in ('re1', 're2', 're3'):
        r = d[k]; p = r['phases_ms']; c = r['counts']
        print(tag, k, r['timing_statistics'], round(r['seconds'], 3), r['iterations'], 'other', round(p['other'], 3), 'eval', round(p['function_evaluations'], 3), 'launches', round(c.get('launches_it', 0), 1), 'reads', round(c.get('reads_it', 0), 2))
PY
(cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH timeout 170 python benchmarks/bench_e2e.py case78484_epigrids --device cuda --resolves 2 2>/dev/null | grep E2E | sed 's/^/NEW /' | cut -c1-1500 | tee $OUT/e2e_78484_final.log)
