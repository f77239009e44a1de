#!/usr/bin/env bash
# The lease after session 61: main + the two patches of raw cpu_2026-12-07_session61 (applied here).
# `pytest -m gpu tests -n 6`, then bench_e2e case9241_pegase in fresh processes, bytecode
# compiled as an installed package has it: the four preload/ahead settings alternating, in
# a cold process (a user's) and a warm one (nvmath loaded first, as the runner).
# Carry .stage/x .stage/cc.  One archive back: $OUT/s62a.tgz (the device returns ~8 files).
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
# the patches onto this call's copy of the tree (each call starts from the VM's tree), unless
# the tree has them already
D=.stage/x
if ! grep -q cudss_ahead caspar_backend/linsolve/cudss.py; then
  # (files a patch creates may be left from an earlier call: removed first)
  rm -f caspar_backend/linsolve/cudss_ahead.py caspar_backend/linsolve/cudss_preload.py \
    tests/kkt/test_cudss_ahead.py tests/kkt/test_cudss_preload.py
  git apply $D/0001-*.patch $D/0002-*.patch 2>/dev/null \
    || { for f in $D/0001-*.patch $D/0002-*.patch; do patch -p1 -s < $f || exit 3; done; }
fi
grep -q cudss_preload caspar_backend/problem.py && grep -q cudss_ahead caspar_backend/linsolve/cudss.py || exit 3
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
