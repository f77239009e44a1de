#!/usr/bin/env bash
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
( python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 ) &
( python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1 ) &
wait %1; tail -1 $OUT/cpu_compile.log
for L in 1 2; do
timeout 45 python -c "
import sys, runpy
import caspar_backend.batch.answer as A
A.LEAD = $L
sys.argv = ['bench_service.py', '--repeat', '2', '--requests', '10000']
runpy.run_path('benchmarks/bench_service.py', run_name='__main__')
" 2>&1 | grep -v Warn | sed "s/^/lead=$L /" | tee -a $OUT/service_lead_kernel.jsonl | cut -c1-220
done
wait; tail -1 $OUT/cuda_compile.log
timeout 200 python -m pytest -q -m gpu tests/compiled/test_cuda_batch.py tests/compiled/test_warm_start.py tests/batch 2>&1 | tail -4 | tee $OUT/pytest_gpu_batch.log
