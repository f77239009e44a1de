#!/usr/bin/env bash
# Call 2 of 2, on the machine s56a.sh left warm: the kernel alone, Van der Pol N = 50
# (B = 1,000 x3 and 132 x2 at 32 lanes, 1,000 at one lane), this tree with QDLDL's
# vectors in shared memory and without (interleaved), then 089fd5f's; twice round.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
NEW=$PWD; MAIN=$PWD/.stage/main; X=$PWD/.stage/x
for round in 1 2; do
  (cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW timeout 100 python $X/k55.py new \
     $X/vdp_new.pkl.xz time 2>&1 | grep "^{" | tee -a $OUT/times.jsonl)
  (cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN timeout 100 python $X/k55.py main \
     $X/vdp_main.pkl.xz time 2>&1 | grep "^{" | tee -a $OUT/times.jsonl)
done
echo "done at ${SECONDS}s"
