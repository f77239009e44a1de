#!/usr/bin/env bash
# Session 59: the GPU service on main (this tree, kernels in .stage/cc) against branch
# thread-streams (.stage/ts, kernels in .stage/cct), interleaved, one round (1, 2, 3
# workers) each per turn; then batch_split.py on each.  Carry .stage/x .stage/cc
# .stage/ts .stage/cct.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0
ls /tmp/site >/dev/null || exit 3
mkdir -p /tmp/cc /tmp/cct && cp -rn $R/.stage/cc/. /tmp/cc/ && cp -rn $R/.stage/cct/. /tmp/cct/
for turn in 1 2; do
  for tree in main ts; do
    if [ $tree = main ]; then cd $R; C=/tmp/cc; else cd $R/.stage/ts; C=/tmp/cct; fi
    PYTHONPATH=/tmp/site:$PWD CASPAR_CACHE_DIR=$C timeout 120 python $R/.stage/x/service_streams.py 1 \
      2>&1 | tee -a $OUT/service_$tree.log | grep "^{" | sed "s/^/$tree /"
    echo "$tree turn $turn at ${SECONDS}s"
  done
done
for tree in main ts; do
  if [ $tree = main ]; then cd $R; C=/tmp/cc; else cd $R/.stage/ts; C=/tmp/cct; fi
  PYTHONPATH=/tmp/site:$PWD CASPAR_CACHE_DIR=$C timeout 100 python $R/.stage/x/batch_split.py 0 \
    2>&1 | tee $OUT/batch_split_$tree.log | grep "^{" | sed "s/^/$tree /"
done
echo "done at ${SECONDS}s"
