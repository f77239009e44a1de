#!/usr/bin/env bash
# After s53f.sh on the same machine (kernels in /tmp/cc; the CUDA kernel compiles here on a
# bare one, ~240 s): the batch table in full at the teams' rule, with the CPU service row
# once more with its Python on core 0 (split_cores, in a child process).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
mkdir -p $OUT/batch
timeout 580 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --service-python-cpus 0 --out $OUT/batch > $OUT/bench_batch.log 2>&1
echo "rc $? at ${SECONDS}s"; grep -E "ik_service|vdp_colloc" $OUT/bench_batch.log
