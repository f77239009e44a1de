#!/usr/bin/env bash
# After s56d (staged, kernels in /tmp/cc): where solve_batch's time goes outside the kernel
# (batch_split.py, ~30 s), then the batch table in full (session 53's s53g.sh, with
# bench_batch's second call), QDLDL's vectors in shared memory when SHARED=1
# (shared_on.py), the CPU service row with its Python on core 0.
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
ls /tmp/site >/dev/null || exit 3
echo "SHARED=${SHARED:-0}" | tee $OUT/shared.txt
timeout 120 python .stage/x/batch_split.py ${SHARED:-0} 2>&1 | grep "^{" | tee $OUT/batch_split.jsonl
echo "split done at ${SECONDS}s"
mkdir -p $OUT/batch
RUN="python -m"; [ "${SHARED:-0}" = 1 ] && RUN="python .stage/x/shared_on.py"
timeout $((590 - SECONDS)) $RUN benchmarks.bench_batch --device cuda --single-max 20 \
  --map-threads 16 --service-python-cpus 0 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? at ${SECONDS}s"; grep -E "ik_service|vdp_colloc" $OUT/bench_batch.log
