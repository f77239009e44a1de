#!/usr/bin/env bash
# Session 60: service_modes.py (fixed: warmup first, __main__ guard) on the gen-tape tree.
# Carry .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/ccg
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
timeout 400 python $R/.stage/x/service_modes.py 2>&1 | tee $OUT/service_modes.log | grep -v Warn | tail -20
echo "service done at ${SECONDS}s"
