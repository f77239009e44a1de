#!/usr/bin/env bash
# session 44 call C: where the host's time goes in a GPU iteration (py-spy samples of
# case9241 re-solves) and the device timeline of one re-solve
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
nvidia-smi --query-gpu=name --format=csv | tee $OUT/gpu.txt
python -m pip install -q --no-deps --no-index --target /tmp/spy .stage/spy/*.whl && export PATH=/tmp/spy/bin:$PATH
LIB=$(python -m benchmarks.cuda_counters build 2>/dev/null | tail -1); echo "lib $LIB"
LD_PRELOAD=$LIB CASPAR_TIMELINE=400000 timeout 280 python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 8 --timeline $OUT/timeline_9241.json > $OUT/e2e_spy.log 2>&1 &
PID=$!
sleep 2
timeout 270 py-spy record --pid $PID -r 2000 --nonblocking --idle -f raw -o $OUT/spy_9241.txt > $OUT/spy.log 2>&1
wait $PID; echo "bench rc $?"
tail -2 $OUT/spy.log
python - $OUT/e2e_spy.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    if not line.startswith('E2E'): continue
    d = json.loads(line[4:])
    for k in [k for k in d if k == 'first' or k.startswith('re')]:
        r = d[k]; p = r['phases_ms']; c = r['counts']
        print(k, r['timing_statistics'], round(r['seconds'], 3), r['iterations'], {a: round(b, 3) for a, b in p.items()}, 'launches', round(c.get('launches_it', 0), 1), 'reads', round(c.get('reads_it', 0), 2))
    print('timeline', d.get('timeline'))
PY
# gc on against gc off (the same process kind, one after the other)
for mode in on off; do
  python -c "import gc, runpy, sys; ('$mode' == 'off') and gc.disable(); sys.argv = ['bench_e2e.py', 'case9241_pegase', '--device', 'cuda', '--resolves', '3']; runpy.run_path('benchmarks/bench_e2e.py', run_name='__main__')" 2>/dev/null | grep E2E | sed "s/^/GC$mode /" >> $OUT/e2e_gc.log
done
python - $OUT/e2e_gc.log <<'PY'
import json, sys
for line in open(sys.argv[1]):
    tag = line.split()[0]; d = json.loads(line[line.index('{'):])
    for k in ('re1', 're2', 're3'):
        r = d[k]; p = r['phases_ms']
        print(tag, k, r['timing_statistics'], round(r['seconds'], 3), r['iterations'], 'other', round(p['other'], 3), 'eval', round(p['function_evaluations'], 3))
PY
