#!/usr/bin/env bash
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc_diag3 PYTHONPATH=$PWD:$PYTHONPATH
timeout 100 python .stage/run/vdp_it1.py 2>&1 | grep -E "^(cuda|cpu) " | tee $OUT/vdp_it1.txt
