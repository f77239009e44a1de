#!/usr/bin/env bash
# session 63 (for the next lease): main (from da0cefc: the derivative and first refinement-test
# reads joined to later reads) against 52841de's caspar_backend, same lease.  pytest -m gpu (new); case9241 re-solves new/base/new
# (CUPTI counters); answers on the GPU (bank, PGLib <= 2000) for both trees; on an H200
# case78484 too.  $OUT/s63b.tgz
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
mkdir -p /tmp/base && tar --exclude=./.stage -cf - . | tar -xf - -C /tmp/base
# the base: 52841de's caspar_backend (git archive 52841de caspar_backend | gzip > .stage/x/base_52841de.tgz)
rm -rf /tmp/base/caspar_backend && tar -xzf .stage/x/base_52841de.tgz -C /tmp/base || { echo "base tree failed"; exit 3; }
grep -q eval_first_order_later /tmp/base/caspar_backend/solver/quantities.py && { echo "base still new"; exit 3; }
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks tests /tmp/base/caspar_backend /tmp/base/benchmarks > /dev/null 2>&1
mkdir -p $OUT/b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/b/gpu.txt
PYTHONUNBUFFERED=1 timeout 150 python -m pytest -m gpu tests -q -rfE -n 8 -p no:cacheprovider --durations=10 > $OUT/b/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/b/pytest_gpu.log
P=$(python -m benchmarks.cuda_counters build 2>/dev/null)
e2e() {  # tree label case
  (cd $1 && PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$1 LD_PRELOAD=$P timeout 60 python benchmarks/bench_e2e.py $3 --device cuda \
     --resolves 3 2>>$OUT/b/e2e.err | grep E2E | sed "s/^/$2 /" >> $OUT/b/e2e_$3.log)
  echo "$2 $3 rc $? at ${SECONDS}s"
}
e2e $PWD new case9241_pegase; e2e /tmp/base base case9241_pegase
if grep -q H200 $OUT/b/gpu.txt; then e2e $PWD new case78484_epigrids; fi
B=$(( (330 - SECONDS) / 2 ))
[ $B -lt 40 ] && B=0
for t in $([ $B -gt 0 ] && echo new base); do
  d=$PWD; [ $t = base ] && d=/tmp/base
  (cd $d && PYTHONPATH=/tmp/site:$d timeout $((B + 10)) python $OLDPWD/.stage/x/s63_answers.py $OUT/b/answers_$t.json $((B - 15)) 2000 > $OUT/b/answers_$t.log 2>&1)
  echo "answers $t rc $? at ${SECONDS}s"; tail -1 $OUT/b/answers_$t.log
done
tar -czf $OUT/s63b.tgz -C $OUT b; rm -rf $OUT/b
