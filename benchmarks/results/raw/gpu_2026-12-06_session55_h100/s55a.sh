#!/usr/bin/env bash
# Session 55: both trees' kernels (+ this tree's with line info) compiled in parallel;
# the kernel alone on the pickled Van der Pol (B = 1,000: 3 x 32 lanes, 1 x 1 lane; B = 132
# at 32), trees one after the other; then Nsight Compute's source counters on B = 132.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 330 python $X/k55.py main \
   $X/vdp_main.pkl.xz compile > $OUT/main_compile.log 2>&1) & P1=$!
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 330 python $X/k55.py new \
   $X/vdp_new.pkl.xz compile > $OUT/new_compile.log 2>&1) & P2=$!
(cd $NEW && PYTHONPATH=$NEW timeout 400 python $X/ncu_pickled.py $X/vdp_new.pkl.xz compile 4 32 \
   > $OUT/lineinfo_compile.log 2>&1) &
wait $P1 $P2
echo "compiled at ${SECONDS}s"; tail -n 2 $OUT/main_compile.log $OUT/new_compile.log
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 60 python $X/k55.py new \
   $X/vdp_new.pkl.xz time 2>&1 | tee -a $OUT/times.jsonl)
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 60 python $X/k55.py main \
   $X/vdp_main.pkl.xz time 2>&1 | tee -a $OUT/times.jsonl)
echo "timed at ${SECONDS}s"
wait
echo "line info at ${SECONDS}s"; tail -n 2 $OUT/lineinfo_compile.log
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
if [ $SECONDS -lt 430 ]; then
  (cd $NEW && PYTHONPATH=$NEW timeout $((575 - SECONDS)) $NCU --clock-control none \
     --section SourceCounters --section WarpStateStats -k regex:_solve_rows -c 1 -f \
     -o $OUT/vdp132_l32 python $X/ncu_pickled.py $X/vdp_new.pkl.xz profile 132 32 2>&1 | tail -n 4)
  echo "profiled at ${SECONDS}s"
  for P in sass cuda; do
    [ $SECONDS -gt 585 ] && break
    timeout $((595 - SECONDS)) $NCU --import $OUT/vdp132_l32.ncu-rep --page source --csv \
      --print-source $P | gzip > $OUT/src_$P.csv.gz
  done
  timeout 20 $NCU --import $OUT/vdp132_l32.ncu-rep --page details --csv > $OUT/details.csv 2>&1
fi
ls -la $OUT
