#!/usr/bin/env bash
# The short form of s56ab.sh for a lease with ~500 s left: this tree's CUDA kernel alone
# compiled, its cache tarred into $OUT, then k55.py time (QDLDL's vectors in shared memory
# and without, interleaved) in the time left.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
X=$PWD/.stage/x; export PYTHONPATH=$PWD
timeout ${COMPILE_S:-420} python $X/k55.py new $X/vdp_new.pkl.xz compile > $OUT/new_compile.log 2>&1
echo "compiled rc $? at ${SECONDS}s"; tail -n 2 $OUT/new_compile.log
(cd /tmp && tar -czf $OUT/cc_new.tgz cc/cuda) && ls -la $OUT/cc_new.tgz
timeout $((${LIMIT_S:-500} - SECONDS)) python $X/k55.py new $X/vdp_new.pkl.xz time 2>&1 \
  | grep "^{" | tee -a $OUT/times.jsonl
echo "done at ${SECONDS}s"
