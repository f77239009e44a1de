#!/usr/bin/env bash
# Session 61 call G: branch preload -- `pytest -m gpu tests -n 6`, then bench_e2e case9241
# in fresh processes with the preload off/on alternating (bytecode compiled, as installed).
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
timeout 170 python -m pytest -m gpu tests -q -rfE -n 6 -p no:cacheprovider --durations=10 > $OUT/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 8 $OUT/pytest_gpu.log
for k in 1 2; do for mode in off on; do
  timeout 60 python .stage/x/e2e_mode.py $mode case9241_pegase --device cuda --resolves 1 2>>$OUT/e2e.err \
    | grep E2E | tee -a $OUT/e2e_$mode.log | python -c "
import json,sys; d=json.loads(sys.stdin.read()[4:]); f=d['first']
print('$mode', 'build', round(d['build_s'],3), 'first', round(f['seconds'],3), 'setup', round(f['setup_s'],3), 'analysis', round(f['analysis_s'],3), 'it', f['iterations'], 're1', round(d['re1']['seconds'],3))"
done; done
echo "done at ${SECONDS}s"
