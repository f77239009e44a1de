#!/usr/bin/env bash
# session 64, call B: the GPU's answers (bank with device='cuda', PGLib typical <= 2000
# buses) of main and of 52841de's caspar_backend, same lease.  $OUT/s64b.tgz
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
[ -d /tmp/base/caspar_backend ] || { mkdir -p /tmp/base && tar --exclude=./.stage -cf - . | tar -xf - -C /tmp/base \
  && rm -rf /tmp/base/caspar_backend && tar -xzf .stage/x/base_52841de.tgz -C /tmp/base; }
mkdir -p $OUT/b
B=${1:-250}
for t in new base; do
  d=$PWD; [ $t = base ] && d=/tmp/base
  (cd $d && PYTHONPATH=/tmp/site:$d timeout $((B + 20)) python $OLDPWD/.stage/x/s63_answers.py $OUT/b/answers_$t.json $B 2000 > $OUT/b/answers_$t.log 2>&1)
  echo "answers $t rc $? at ${SECONDS}s"; tail -1 $OUT/b/answers_$t.log
done
tar -czf $OUT/s64b.tgz -C $OUT b; rm -rf $OUT/b
