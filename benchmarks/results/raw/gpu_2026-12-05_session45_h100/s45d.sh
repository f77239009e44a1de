#!/usr/bin/env bash
# session 45 call D: IK GPU batch, HEAD against 179aea0 (before the small K's Bunch-Kaufman), same card, BLOCKS_PER_SM default and 8
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
( export PYTHONPATH=$PWD/.stage/old:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc_old; python -m caspar_backend.compiled --cuda > $OUT/old_cuda_compile.log 2>&1; python -m caspar_backend.compiled > $OUT/old_cpu_compile.log 2>&1 ) &
wait
for tree in new old; do
  if [ $tree = old ]; then P=$PWD/.stage/old; C=/tmp/cc_old; else P=$PWD; C=/tmp/cc; fi
  PYTHONPATH=$P:$PYTHONPATH CASPAR_CACHE_DIR=$C timeout 120 python .stage/run/s45c.py 2>&1 | grep -E "^(cuda|cpu)" | sed "s/^/$tree /" | tee -a $OUT/ik_old_new.txt
done
