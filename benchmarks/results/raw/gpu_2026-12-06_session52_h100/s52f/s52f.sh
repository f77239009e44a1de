#!/usr/bin/env bash
# Where do teams start to pay?  Van der Pol collocation with N = 5, 10, 20 intervals
# (smaller instances than N = 50's), B = 1,000, lanes 1, 8, 32 (same warm machine).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
for N in 5 10 20; do
timeout 70 python -c "
import sys; import benchmarks.bench_kernel_latency as m
from benchmarks.bench_batch import vdp_workload
m.workload = lambda case, B: vdp_workload(B, N=$N)
m.main(['--case', 'vdp', '--sizes', '1000', '--lanes', '1,8,32', '--repeats', '3'])
" 2>&1 | grep "^{" | sed "s/^{/{\"N\": $N, /" | tee -a $OUT/lanes_by_size.txt
done
echo "done at ${SECONDS}s"
