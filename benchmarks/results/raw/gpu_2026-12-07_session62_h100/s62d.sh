#!/usr/bin/env bash
# main + patch 0001 (cudss_preload) alone: pytest -m gpu; then s62b's case9241 part.
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
rm -f caspar_backend/linsolve/cudss_ahead.py caspar_backend/linsolve/cudss_preload.py \
  tests/kkt/test_cudss_ahead.py tests/kkt/test_cudss_preload.py
git apply .stage/x/0001-*.patch 2>/dev/null || patch -p1 -s < .stage/x/0001-*.patch || exit 3
grep -q cudss_preload caspar_backend/problem.py || exit 3
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/d
timeout 330 python -m pytest -m gpu tests -q -rfE -n 8 -p no:cacheprovider --durations=10 > $OUT/d/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 8 $OUT/d/pytest_gpu.log
P=$(python -m benchmarks.cuda_counters build 2>/dev/null)
LD_PRELOAD=$P timeout $((540 - SECONDS)) python benchmarks/bench_e2e.py case9241_pegase --device cuda --resolves 3 \
  --profile $OUT/d/prof_9241.txt 2>$OUT/d/e2e.err | grep E2E > $OUT/d/e2e_9241.log
echo "e2e rc $? at ${SECONDS}s"
tar -czf $OUT/s62d.tgz -C $OUT d; rm -rf $OUT/d
