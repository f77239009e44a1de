#!/usr/bin/env bash
# session 44 call D: GPU tests of the launcher / output pool / single inertia read, then
# case9241 re-solves alternating with 16d1b40 (CUPTI's counts)
export CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
LIB=$(PYTHONPATH=$ROOT:$PYTHONPATH python -m benchmarks.cuda_counters build 2>/dev/null | tail -1)
(PYTHONPATH=$ROOT:$PYTHONPATH timeout 240 python -m pytest -q -m gpu -p no:cacheprovider tests/kkt tests/arrays tests/solver tests/evaluators tests/batch/test_ldl_device.py tests/batch/test_evaluator.py tests/batch/test_lockstep.py > $OUT/pytest_gpu.log 2>&1; echo "pytest rc $?"; tail -n 3 $OUT/pytest_gpu.log)
for k in 1 2; do
  (cd $ROOT/.stage/old && PYTHONPATH=$ROOT/.stage/old:$PYTHONPATH LD_PRELOAD=$LIB CASPAR_CACHE_DIR=/tmp/cc_old timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/OLD /' >> $OUT/e2e_9241.log)
  (cd $ROOT && PYTHONPATH=$ROOT:$PYTHONPATH LD_PRELOAD=$LIB timeout 150 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 2>/dev/null | grep E2E | sed 's/^/NEW /' >> $OUT/e2e_9241.log)
done
python - $OUT/e2e_9241.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    tag = line.split()[0]; d = json.loads(line[line.index('{'):])
    for k in ('re1', 're2', 're3'):
        r = d[k]; p = r['phases_ms']; c = r['counts']
        print(tag, k, r['timing_statistics'], round(r['seconds'], 3), r['iterations'], repr(r['f'])[:16], 'other', round(p['other'], 3), 'eval', round(p['function_evaluations'], 3), 'kkt', round(p['kkt_assembly'], 3), 'solve', round(p['kkt_solve'], 3), 'launches', round(c.get('launches_it', 0), 1), 'reads', round(c.get('reads_it', 0), 2))
PY
