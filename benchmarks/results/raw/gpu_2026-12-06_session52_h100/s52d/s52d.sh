#!/usr/bin/env bash
# Service sweep (same warm machine, CPU kernels in /tmp/cc): the service process pinned to
# fewer cores (taskset) -- does a GIL hand-off between threads on fewer cores cost less?
# Session 50 (H100 host, all 16 cores, 4 kernel threads): 12.3k solves/s, p99 8.0 ms;
# the kernel stubbed 16-17.6k/s.  bench_service.py, 64 clients, 10^4 IK requests.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
lscpu | grep -E "^(Model name|Thread|Core|Socket|NUMA node)" | tee $OUT/lscpu.txt
B="python benchmarks/bench_service.py --repeat 2 --requests 10000 --cache /tmp/svc_cache.npz"
run() {  # cores threads [--stub]
  local pre=""; [ "$1" != all ] && pre="taskset -c $1"
  local th=""; [ "$2" != d ] && th="--threads $2"
  timeout 90 $pre $B $th $3 2>&1 | grep "^{" | sed "s/^{/{\"cores\": \"$1\", \"threads\": \"$2\", /" \
    | tee -a $OUT/service.jsonl
}
run all 4; run all 4 --stub
run 0-7 4; run 0-7 4 --stub
run 0-5 4; run 0-5 3; run 0-5 3 --stub
run 0-3 2; run 0-3 4; run 0-3 2 --stub
run 0-1 2 --stub
run all 4; run 0-5 4
echo "done at ${SECONDS}s"
