#!/usr/bin/env bash
# Prepared for the next H200 lease (after staging p1..p6 as ../shared/GPU.md says; carry
# .stage/p6 and this script's copy). Main after session 38: the CUDA batch tests for
# solve_batch(device='auto'), the batch tables with the service's 'auto' row, and issue
# 21's two AC-OPF figures (first solve and re-solves, launches and reads per iteration).
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait; cat $OUT/cpu_compile.log $OUT/cuda_compile.log
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/adapters tests/batch \
  tests/compiled > $OUT/pytest_part1.log 2>&1; echo "part1 rc $?"; tail -n 1 $OUT/pytest_part1.log
timeout 300 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --out $OUT/batch > $OUT/bench_batch.log 2>&1; echo "bench_batch rc $?"
grep -E "ik_service|vdp_colloc +caspar_batch" $OUT/bench_batch.log | cut -c1-200
# a second call: LD_PRELOAD=$(python -m benchmarks.cuda_counters build) python benchmarks/bench_e2e.py \
#   case9241_pegase --resolves 2 > $OUT/e2e_9241.log   (and case78484_epigrids)
