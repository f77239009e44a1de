#!/usr/bin/env bash
# session 47 call C: PGLib 500-2,000 buses on the GPU against IPOPT (the perturbation handler's iteration counts on the device)
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$PWD:$PYTHONPATH
timeout 570 python -m benchmarks --suite acopf --min-buses 500 --max-buses 2000 --variants typ --device cuda --no-cpu --tol 1e-6 --ipopt-workers 12 --time-limit 120 --out $OUT/acopf > $OUT/acopf.log 2>&1; echo "acopf rc $? at ${SECONDS}s"; tail -n 40 $OUT/acopf.log
