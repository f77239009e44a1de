#!/usr/bin/env bash
# bisect the CUDA batch kernel's IK 10^4 slowdown between 87c1c41 (0.034 s) and 179aea0 (0.149 s) on one H100
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
ROOT=$PWD
for c in $(ls .stage/bis); do
  ( cd .stage/bis/$c && CASPAR_CACHE_DIR=/tmp/cb_$c PYTHONPATH=$ROOT/.stage/bis/$c:$PYTHONPATH python -m caspar_backend.compiled > $OUT/${c}_cpu.log 2>&1 ) &
  ( cd .stage/bis/$c && CASPAR_CACHE_DIR=/tmp/cb_$c PYTHONPATH=$ROOT/.stage/bis/$c:$PYTHONPATH python -m caspar_backend.compiled --cuda > $OUT/${c}_cuda.log 2>&1 ) &
done
wait
echo "compiled at ${SECONDS}s"; tail -q -n 1 $OUT/*.log
for c in $(ls .stage/bis); do
  ( cd .stage/bis/$c && CASPAR_CACHE_DIR=/tmp/cb_$c PYTHONPATH=$ROOT/.stage/bis/$c:$PYTHONPATH timeout 45 python benchmarks/bench_kernel_latency.py --case ik --sizes 10000 --repeats 3 2>> $OUT/err_$c.log | sed "s/^/$c /" | tee -a $OUT/latency.txt )
done
echo "done at ${SECONDS}s"
