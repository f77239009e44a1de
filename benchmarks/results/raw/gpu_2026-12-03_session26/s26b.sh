#!/usr/bin/env bash
# session 26, last round: A) host reads/syncs per iteration from CUPTI (case9241);
# B) device='auto' break-even; C) the service on the host's cores; D) the fixed GPU test
mkdir -p $OUT
export PYTHONPATH=/tmp/site:$PWD LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH CASPAR_CACHE_DIR=/tmp/caspar_cache PYTHONUNBUFFERED=1 PYTHONPYCACHEPREFIX=/tmp/pyc
LIB=$(python3 -m benchmarks.cuda_counters build); echo "lib $LIB"
LD_PRELOAD=$LIB python3 -c "import sys; sys.path.insert(0,'.'); from benchmarks.cuda_counters import counted_by; import cupy; a=cupy.ones(10); float(a.sum()); print('counted by', counted_by())"
LD_PRELOAD=$LIB timeout 75 python3 .gpurun/s25_solveprof.py case9241_pegase > $OUT/solveprof_cupti.log 2>&1; grep -E "build|solve [0-9]|per iteration" $OUT/solveprof_cupti.log | cut -c1-330
timeout 140 python3 .gpurun/s26_auto.py > $OUT/auto.jsonl 2> $OUT/auto.err; echo "auto rc $?"; cat $OUT/auto.jsonl; tail -3 $OUT/auto.err
OUT=$OUT timeout 120 python3 .gpurun/s25_svc.py cpu > $OUT/service_cpu.log 2>&1; echo "svc rc $?"; cat $OUT/service_cpu.log | cut -c1-300
CUPY_CACHE_DIR=/tmp/cupy_fresh2 CUPY_CACHE_SAVE_CUDA_SOURCE=1 timeout 90 python3 .gpurun/s26_first_solve.py case9241_pegase > $OUT/first_solve.log 2>&1; cat $OUT/first_solve.log | head -12
timeout 60 python3 -m pytest -q -m gpu tests/solver/test_gpu_solver.py tests/test_gpu_warmup.py -k "result_form or warmup" -p no:cacheprovider 2>&1 | tail -1
