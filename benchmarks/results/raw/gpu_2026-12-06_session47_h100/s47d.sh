#!/usr/bin/env bash
# session 47 call D: the OCP suite on the GPU against IPOPT (the table in RESULTS.md dates from 2026-12-01)
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=$PWD:$PYTHONPATH
timeout 570 python -m benchmarks --device cuda --no-cpu --tol 1e-6 --time-limit 150 --suite ocp --ocp-N 10000,100000 --out $OUT/ocp > $OUT/ocp.log 2>&1; echo "ocp rc $? at ${SECONDS}s"; tail -n 30 $OUT/ocp.log
