#!/usr/bin/env bash
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
for v in d a b c; do
VARIANT=$v timeout 100 python .stage/run/s43a.py 2>&1 | grep "VARIANT\|tree sum" | tee -a $OUT/tree_probe4.log
done
