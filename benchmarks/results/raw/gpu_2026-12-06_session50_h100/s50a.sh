#!/usr/bin/env bash
# Next lease, first call after staging (p6 with this): the GPU tables that 0e4306d (the static
# term's rows at 1e-4 on cuDSS's Bunch-Kaufman) moves -- the OCP suite (RESULTS.md's
# vanderpol_colloc N = 10^4 "NO": 3.6161748 against IPOPT's 3.6161854; session 49 measured
# IPOPT's objective with the change) and PGLib 500-2,000 buses (case1803_snem, case1888_rte).
# Copy $OUT/ocp and $OUT/acopf_500_2000 to benchmarks/results/raw/<lease>/, then the ocp
# folder's results.csv/meta.json to benchmarks/results/ocp/gpu (edit meta's commit and raw
# lines) and the acopf rows into benchmarks/results/acopf/gpu/results.csv (replace those eight
# rows; meta's commit/date lines say which rows come from which run); python -m benchmarks report.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
timeout 330 python -m benchmarks --device cuda --no-cpu --tol 1e-6 --time-limit 150 --suite ocp \
  --ocp-N 10000,100000 --out $OUT/ocp > $OUT/ocp.log 2>&1
echo "ocp rc $? at ${SECONDS}s"; tail -n 12 $OUT/ocp.log
LD_PRELOAD=$(python -m benchmarks.cuda_counters build) timeout $((580 - SECONDS)) python -m benchmarks \
  --suite acopf --min-buses 500 --max-buses 2000 --variants typ --device cuda --no-cpu --tol 1e-6 \
  --time-limit 120 --out $OUT/acopf_500_2000 > $OUT/acopf.log 2>&1
echo "acopf rc $? at ${SECONDS}s"; tail -n 14 $OUT/acopf.log
