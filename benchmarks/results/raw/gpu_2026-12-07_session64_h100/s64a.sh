#!/usr/bin/env bash
# session 64, call A: main (session 63's joined reads) against 52841de's caspar_backend on
# one lease: pytest -m gpu on main; bench_e2e re-solves of case9241 (new, base, new) and
# case78484 (new) with CUPTI's counters.  $OUT/s64a.tgz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
mkdir -p /tmp/base && tar --exclude=./.stage -cf - . | tar -xf - -C /tmp/base
rm -rf /tmp/base/caspar_backend && tar -xzf .stage/x/base_52841de.tgz -C /tmp/base || { echo "base tree failed"; exit 3; }
grep -q eval_first_order_later /tmp/base/caspar_backend/solver/quantities.py && { echo "base still new"; exit 3; }
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks tests /tmp/base/caspar_backend /tmp/base/benchmarks > /dev/null 2>&1
mkdir -p $OUT/a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/a/gpu.txt
echo "staged at ${SECONDS}s"
PYTHONUNBUFFERED=1 timeout 170 python -m pytest -m gpu tests -q -rfE -n 8 -p no:cacheprovider --durations=10 > $OUT/a/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/a/pytest_gpu.log
P=$(python -m benchmarks.cuda_counters build 2>/dev/null)
e2e() {  # tree label case limit
  (cd $1 && PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$1 LD_PRELOAD=$P timeout $4 python benchmarks/bench_e2e.py $3 --device cuda \
     --resolves 3 2>>$OUT/a/e2e.err | grep E2E | sed "s/^/$2 /" >> $OUT/a/e2e_$3.log)
  echo "$2 $3 rc $? at ${SECONDS}s"
}
e2e $PWD new case9241_pegase 80; e2e /tmp/base base case9241_pegase 80
L=$((${LIMIT:-585} - SECONDS)); [ $L -gt 200 ] && L=200; [ $L -gt 60 ] && e2e $PWD new case78484_epigrids $L
L=$((${LIMIT:-585} - SECONDS)); [ $L -gt 60 ] && e2e $PWD new case9241_pegase $L
tar -czf $OUT/s64a.tgz -C $OUT a; rm -rf $OUT/a
