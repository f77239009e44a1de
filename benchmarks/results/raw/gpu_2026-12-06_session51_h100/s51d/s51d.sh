#!/usr/bin/env bash
# Next lease, any call (nothing to compile but small timing kernels, ~1 min): one GPU
# thread's time per piece of the compiled kernel's iteration
# (benchmarks/bench_kernel_parts_cuda.py) on the solved rows saved beforehand on the VM
#   python benchmarks/bench_kernel_parts_cuda.py --problem vdp --save-workspace .stage/parts/vdp.npz
#   python benchmarks/bench_kernel_parts_cuda.py --problem ik --save-workspace .stage/parts/ik.npz
# (carry .stage/parts too).  Van der Pol N = 50 at B = 1 and 1,000, one thread per block:
# every piece as the batch kernel calls it (main), and the two variant files of
# benchmarks/kernel_variants/: batched_loads.py (kkt_build, kkt_matvec, ldl_solve: four
# loads issued before their stores) and ldl_pipelined.py (the
# factorization's and the solves' next step's structure loaded before this step's stores).  Session 50 (H200, raw
# gpu_2026-12-06_session50_h200_parts): factorization 2.42 / 2.97 ms (B = 1 / 1,000), the
# register variant 2.29 / 2.85; solve 0.61 / 1.46; matvec 0.37 / 0.79; kkt_build 1.03 /
# 2.28; inlining changed nothing.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
H="python benchmarks/bench_kernel_parts_cuda.py --workspace"
timeout 200 $H .stage/parts/vdp.npz --problem vdp --sizes 1,1000 --reps 10 \
  --pieces kkt_build,kkt_matvec,ldl_solve --modes main,variant \
  --variants benchmarks/kernel_variants/batched_loads.py 2>&1 | grep "^{" | tee $OUT/parts_batched.txt
timeout 120 $H .stage/parts/vdp.npz --problem vdp --sizes 1,1000 --reps 10 \
  --pieces ldl_factor,ldl_solve --modes main,variant \
  --variants benchmarks/kernel_variants/ldl_pipelined.py 2>&1 | grep "^{" | tee $OUT/parts_pipelined.txt
timeout 120 $H .stage/parts/ik.npz --problem ik --sizes 1,10000 --reps 20 \
  --pieces kkt_build,kkt_matvec,ldl_solve --modes main,variant \
  --variants benchmarks/kernel_variants/batched_loads.py 2>&1 | grep "^{" | tee $OUT/parts_ik.txt
for bl in 0 1; do                   # every piece as main builds it, and with batched loads
  CASPAR_CUDA_BATCHED_LOADS=$bl timeout 150 $H .stage/parts/vdp.npz --problem vdp --sizes 1,1000 \
    --reps 10 --modes main 2>&1 | grep "^{" | sed "s/^{/{\"batched_loads\": $bl, /" \
    | tee -a $OUT/parts_rewrite.txt
done
echo "done at ${SECONDS}s"
