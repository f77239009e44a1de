#!/usr/bin/env bash
# Call 1 of 2 (no staging): this tree's CUDA kernel and 089fd5f's (.stage/main) compiled
# in parallel into /tmp/cc and /tmp/cc_main, each by one launch of 4 Van der Pol instances
# (k55.py compile).  Call s56b.sh at once after it (the machine stays warm 30 s).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 570 python $X/k55.py main \
   $X/vdp_main.pkl.xz compile > $OUT/main_compile.log 2>&1) &
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 570 python $X/k55.py new \
   $X/vdp_new.pkl.xz compile > $OUT/new_compile.log 2>&1) &
wait
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/main_compile.log $OUT/new_compile.log
