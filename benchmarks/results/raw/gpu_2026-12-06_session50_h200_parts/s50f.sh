#!/usr/bin/env bash
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
timeout 150 python benchmarks/bench_kernel_parts_cuda.py --problem vdp --workspace .stage/parts/vdp.npz \
  --sizes 1,1000 --reps 10 --pieces nlp_zeroth,nlp_first,nlp_hess,kkt_build --modes main 2>&1 \
  | grep "^{" | tee $OUT/parts_vdp2.txt | cut -c1-150
timeout 60 python benchmarks/bench_kernel_parts_cuda.py --problem ik --workspace .stage/parts/ik.npz \
  --sizes 1,10000 --reps 20 --pieces ldl_factor,ldl_solve,nlp_hess --modes main 2>&1 \
  | grep "^{" | tee $OUT/parts_ik.txt | cut -c1-150
echo "done at ${SECONDS}s"
