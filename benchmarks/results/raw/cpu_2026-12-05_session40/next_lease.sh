#!/usr/bin/env bash
# Prepared for the next H200 lease (stage p1..p6 as ../shared/GPU.md says; carry .stage/p6
# and .stage/run with this script's copy).  Session 40 ran the owed GPU tests (all passed);
# left: issue 21's AC-OPF figures at the current tree and the service's hand-off floor.
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
# 1. the service's wake-chain lead on the host (solve_batch stubbed: the service's own Python;
#    session 40: 16.1-17.6k requests/s at LEAD = 2 against 32-38k on the 2-core VM)
for L in 1 2 4 8 16; do
timeout 40 python -c "
import sys, runpy
import caspar_backend.batch.answer as A
A.LEAD = $L
sys.argv = ['bench_service.py', '--stub', '--repeat', '2', '--requests', '10000']
runpy.run_path('benchmarks/bench_service.py', run_name='__main__')
" 2>&1 | grep -v Warn | sed "s/^/lead=$L /" | tee -a $OUT/service_lead.jsonl | cut -c1-150
done
# 1b. the same with the IK kernel (the CPU kernels compiled first, ~100 s on a fresh machine);
#    on the 2-core VM (session 40) LEAD = 1 gave 14.7-17.7k solves/s against LEAD = 2's
#    12.7-15.0k (stubbed 47-50k against 37-38k), p99 13-18 against 13-15 ms
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1
for L in 1 2 1 2; do
timeout 60 python -c "
import sys, runpy
import caspar_backend.batch.answer as A
A.LEAD = $L
sys.argv = ['bench_service.py', '--repeat', '2', '--requests', '10000']
runpy.run_path('benchmarks/bench_service.py', run_name='__main__')
" 2>&1 | grep -v Warn | sed "s/^/lead=$L /" | tee -a $OUT/service_lead_kernel.jsonl | cut -c1-150
done
# 2. issue 21: case9241 end to end with launch/read counts and the device timeline
LIB=$(python -m benchmarks.cuda_counters build 2>$OUT/counters_build.err)
LD_PRELOAD=$LIB CASPAR_TIMELINE=1 timeout 200 python benchmarks/bench_e2e.py case9241_pegase --device cuda \
  --resolves 2 --timeline $OUT/timeline_9241.json > $OUT/e2e_9241.log 2>&1; echo "e2e rc $?"
grep E2E $OUT/e2e_9241.log | cut -c1-1200
