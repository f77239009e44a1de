#!/usr/bin/env bash
# session 29, third device run: cuDSS's nested-dissection levels across PGLib sizes
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONPYCACHEPREFIX=/tmp/pyc CUPY_CACHE_DIR=/tmp/cupy_s29c CASPAR_CACHE_DIR=/tmp/cc_c RESOLVES=1
python -c 'import cupy; cupy.zeros(1).sum()'
run() { timeout $1 python .gpurun/cudss_cfg.py $2 "$3" > $OUT/nd_$2.log 2>&1; grep -v Warn $OUT/nd_$2.log | grep -A2 CFG | cut -c1-330; }
run 150 case78484_epigrids '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 14}, {"ND_NLEVELS": 16}, {"ND_NLEVELS": 18}]'
run 100 case30000_goc '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 14}, {"ND_NLEVELS": 16}]'
run 70 case19402_goc '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 14}, {"ND_NLEVELS": 16}]'
run 50 case9241_pegase '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 14}, {"ND_NLEVELS": 16}]'
run 40 case2000_goc '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 14}, {"ND_NLEVELS": 8}]'
run 30 case500_goc '[{}, {"ND_NLEVELS": 12}, {"ND_NLEVELS": 8}]'
