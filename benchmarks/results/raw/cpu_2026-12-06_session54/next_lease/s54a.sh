#!/usr/bin/env bash
# Session 54: the leader's vector loops and QDLDL's independent loops as team jobs (this
# tree: main after session 54) against
# 089fd5f (.stage/main): each tree's CUDA kernel compiled in parallel, then the kernel
# alone -- Van der Pol N = 50 (B = 1,000 and 132; 1 and 32 lanes), the IK 10^4 (1 lane) --
# the trees interleaved, then this tree's batch-kernel GPU tests (teams at 4 and 32 lanes).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
NEW=$PWD; MAIN=$PWD/.stage/main
(cd $MAIN && CASPAR_CACHE_DIR=/tmp/cc_main PYTHONPATH=$MAIN:$PYTHONPATH timeout 400 \
   python -m caspar_backend.compiled --cuda > $OUT/main_compile.log 2>&1) &
(cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW:$PYTHONPATH timeout 400 \
   python -m caspar_backend.compiled --cuda > $OUT/new_compile.log 2>&1) &
wait
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/main_compile.log $OUT/new_compile.log
run() {  # tree case sizes lanes
  if [ $1 = main ]; then D=$MAIN; C=/tmp/cc_main; else D=$NEW; C=/tmp/cc; fi
  (cd $D && CASPAR_CACHE_DIR=$C PYTHONPATH=$D:$PYTHONPATH timeout 120 python \
     benchmarks/bench_kernel_latency.py --case $2 --sizes $3 --lanes $4 --repeats 3 2>&1 \
     | grep "^{" | sed "s/^/$1 /") | tee -a $OUT/ab.txt | cut -c1-330
}
run new vdp 1000 32,1; run main vdp 1000 32,1
echo "round 1 at ${SECONDS}s"
run main vdp 1000,132 32; run new vdp 1000,132 32
echo "round 2 at ${SECONDS}s"
[ $SECONDS -lt 420 ] && { run new ik 10000 1; run main ik 10000 1; }
echo "timed at ${SECONDS}s"
[ $SECONDS -lt 500 ] && (cd $NEW && CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$NEW:$PYTHONPATH \
  timeout $((585 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider \
  tests/compiled/test_cuda_batch.py > $OUT/pytest_batch.log 2>&1)
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_batch.log
