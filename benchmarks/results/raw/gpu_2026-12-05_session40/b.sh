#!/usr/bin/env bash
# Session 40, call B: the kernels compiled, pytest -m gpu over adapters/batch/compiled, the
# service on the host's CPU (batches closing when the last batch's clients are back).
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait; tail -n 2 $OUT/cpu_compile.log $OUT/cuda_compile.log
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/adapters tests/batch \
  tests/compiled > $OUT/pytest_part1.log 2>&1; echo "part1 rc $?"; tail -n 12 $OUT/pytest_part1.log
for w in 0.002 0.005; do timeout 60 python benchmarks/bench_service.py --repeat 2 --requests 10000 --max-wait $w 2>&1 | grep -v Warn | tee -a $OUT/service_cpu.jsonl | cut -c1-160; done
