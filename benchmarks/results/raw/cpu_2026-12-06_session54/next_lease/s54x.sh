#!/usr/bin/env bash
# Both trees' CUDA kernels compiled in parallel, then the kernel alone on Van der Pol
# B = 1,000 (pickled layouts, no staging), the trees one after the other.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 300 python $X/kernel_alone_pickled.py main \
   $X/vdp_main.pkl.xz compile > $OUT/main_compile.log 2>&1) &
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 300 python $X/kernel_alone_pickled.py new \
   $X/vdp_new.pkl.xz compile > $OUT/new_compile.log 2>&1) &
wait
echo "compiled at ${SECONDS}s"; tail -n 2 $OUT/main_compile.log $OUT/new_compile.log
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 60 python $X/kernel_alone_pickled.py new \
   $X/vdp_new.pkl.xz time 2>&1 | tee -a $OUT/times.jsonl)
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 60 python $X/kernel_alone_pickled.py main \
   $X/vdp_main.pkl.xz time 2>&1 | tee -a $OUT/times.jsonl)
echo "done at ${SECONDS}s"
