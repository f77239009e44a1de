#!/usr/bin/env bash
# Session 50's last device seconds: one GPU thread's time per piece (saved Van der Pol row,
# no CPU kernel compile), out of line / inlined / the factorization's register variant.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
timeout 150 python benchmarks/bench_kernel_parts_cuda.py --problem vdp --workspace .stage/parts/vdp.npz \
  --sizes 1,1000 --reps 10 --pieces ldl_factor,ldl_solve,kkt_matvec \
  --variants benchmarks/kernel_variants/ldl_factor_register_d.py 2>&1 | tee $OUT/parts_vdp.txt | cut -c1-160
echo "done at ${SECONDS}s"
