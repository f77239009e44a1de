#!/usr/bin/env bash
# Next lease (session 53), first call after staging (~300-400 s): the service with its Python
# threads on few cores and the kernel's threads on the others (bench_service.py
# --python-cpus: Numba's workqueue pool started from the other cores first).  Session 52
# (H100 host, raw gpu_2026-12-06_session52_h100/s52d): all 16 cores, 4 kernel threads
# 6.8-8.9k solves/s; the kernel stubbed 11.5-11.9k on all cores, 22.1-22.3k pinned to 0-1.
# Only the CPU kernels are needed (device='cpu').
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/cpu_compile.log
B="python benchmarks/bench_service.py --repeat 2 --requests 10000 --cache /tmp/svc_cache.npz"
run() {  # python-cpus threads [--stub]
  local pc=""; [ "$1" != all ] && pc="--python-cpus $1"
  timeout 90 $B $pc --threads $2 $3 2>&1 | grep "^{" \
    | sed "s/^{/{\"python_cpus\": \"$1\", \"threads\": $2, /" | tee -a $OUT/service_split.jsonl
}
run all 4; run all 4 --stub
run 0-1 4; run 0-1 8; run 0-1 12; run 0-1 8 --stub
run 0-3 4; run 0-3 8; run 0-3 12
run 0 8; run 0 14
run all 4; run 0-1 8
echo "done at ${SECONDS}s"
