#!/usr/bin/env bash
# The lease after session 61: main + preload.patch + ahead.patch (raw cpu_2026-12-07_session61).
# `pytest -m gpu tests -n 6`, then bench_e2e case9241_pegase in fresh processes, bytecode
# compiled as an installed package has it: the four preload/ahead settings alternating, in
# a cold process (a user's) and a warm one (nvmath loaded first, as the runner).
# Carry .stage/x .stage/cc.  One archive back: $OUT/s62a.tgz (the device returns ~8 files).
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/r
timeout 200 python -m pytest -m gpu tests -q -rfE -n 6 -p no:cacheprovider --durations=10 > $OUT/r/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 6 $OUT/r/pytest_gpu.log
for k in 1 2; do for warm in no yes; do for pre in off on; do for ah in off on; do
  timeout 60 python .stage/x/e2e_mode.py preload=$pre ahead=$ah warm=$warm case9241_pegase --device cuda --resolves 1 \
    2>>$OUT/r/e2e.err | grep E2E | tee -a $OUT/r/e2e_${warm}_${pre}_${ah}.log | python -c "
import json,sys; d=json.loads(sys.stdin.read()[4:]); f=d['first']
print('warm=$warm preload=$pre ahead=$ah build', round(d['build_s'],3), 'first', round(f['seconds'],3), 'setup', round(f['setup_s'],3), 'waited', round(f['analysis_s'],3), 'it', f['iterations'], 'f', f['f'], 're1', round(d['re1']['seconds'],3))"
done; done; done; done
echo "done at ${SECONDS}s"; tar -czf $OUT/s62a.tgz -C $OUT r
