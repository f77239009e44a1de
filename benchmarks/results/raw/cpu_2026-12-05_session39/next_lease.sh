#!/usr/bin/env bash
# Prepared for the next H200 lease (stage p1..p6 as ../shared/GPU.md says; carry .stage/p6
# and .stage/run with this script's copy).  Main after session 39: session 38's items
# (the CUDA batch tests after solve_batch(device='auto'), the batch tables with the
# service's 'auto' row) and the restoration phase's KKT with p, n eliminated on the GPU
# general path (kkt/elastic.py on CuPy + cuDSS: never run on a device yet).
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait; tail -n 3 $OUT/cpu_compile.log $OUT/cuda_compile.log
# the GPU general path, restoration included (bank problems on cuda, emulation-free)
timeout 240 python -m pytest -q -m gpu -p no:cacheprovider tests/solver tests/kkt \
  > $OUT/pytest_solver_kkt.log 2>&1; echo "solver/kkt rc $?"; tail -n 1 $OUT/pytest_solver_kkt.log
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/adapters tests/batch \
  tests/compiled > $OUT/pytest_part1.log 2>&1; echo "part1 rc $?"; tail -n 1 $OUT/pytest_part1.log
timeout 300 python -m benchmarks.bench_batch --device cuda --single-max 20 --map-threads 16 \
  --out $OUT/batch > $OUT/bench_batch.log 2>&1; echo "bench_batch rc $?"
grep -E "ik_service|vdp_colloc +caspar_batch" $OUT/bench_batch.log | cut -c1-200
# a second call (issue 21's figures): LD_PRELOAD=$(python -m benchmarks.cuda_counters build) \
#   python benchmarks/bench_e2e.py case9241_pegase --resolves 2 > $OUT/e2e_9241.log
#   (and case78484_epigrids)
