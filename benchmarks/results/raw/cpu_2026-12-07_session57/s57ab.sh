#!/usr/bin/env bash
# s56ab.sh with session 57's straight-line elimination experiment (straight/s57s.sh) run
# beside the compiles (GPU-bound against their CPU).  s56a.sh and s56b.sh in one call: this tree's CUDA kernel and 089fd5f's compiled in
# parallel (with this tree's CPU kernels beside them), the new tree's kernel cache tarred
# into $OUT, then the kernel alone timed (k55.py time: this tree with QDLDL's vectors in
# shared memory and without, interleaved, then 089fd5f's) in the time left.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 480 python $X/k55.py main \
   $X/vdp_main.pkl.xz compile > $OUT/main_compile.log 2>&1) &
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 480 python $X/k55.py new \
   $X/vdp_new.pkl.xz compile > $OUT/new_compile.log 2>&1) &
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 480 python -m caspar_backend.compiled \
   > $OUT/cpu_compile.log 2>&1) &
(cd $NEW && S57_LIMIT=330 OUT=$OUT PK=$X/vdp_new.pkl.xz bash $X/straight/s57s.sh > $OUT/s57s.log 2>&1) &
wait
echo "compiled (and s57s) at ${SECONDS}s"; tail -n 3 $OUT/s57s.log; tail -n 1 $OUT/main_compile.log $OUT/new_compile.log $OUT/cpu_compile.log
(cd /tmp && tar -czf $OUT/cc_new.tgz cc/cuda) && ls -la $OUT/cc_new.tgz
for round in 1 2; do
  left=$((585 - SECONDS)); [ $left -lt 20 ] && break
  (cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout $((left < 100 ? left : 100)) \
     python $X/k55.py new $X/vdp_new.pkl.xz time 2>&1 | grep "^{" | tee -a $OUT/times.jsonl)
  left=$((585 - SECONDS)); [ $left -lt 20 ] && break
  (cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout $((left < 100 ? left : 100)) \
     python $X/k55.py main $X/vdp_main.pkl.xz time 2>&1 | grep "^{" | tee -a $OUT/times.jsonl)
done
echo "done at ${SECONDS}s"
