#!/usr/bin/env bash
# Session 60: `pytest -m gpu tests -n 6` on the gen-tape tree (= main cc6b638 + gen-tape),
# kernels prebuilt in .stage/ccg.  Carry .stage/x .stage/gt .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/ccg
mkdir -p /tmp/ccg && cp -rn $R/.stage/ccg/. /tmp/ccg/ 2>/dev/null
cd $R/.stage/gt && export PYTHONPATH=/tmp/site:$PWD
timeout 570 python -m pytest -m gpu tests -v -rfE -n ${N:-6} -p no:cacheprovider --durations=30 > $OUT/pytest_gpu.log 2>&1
echo "rc $? at ${SECONDS}s"; tail -n 40 $OUT/pytest_gpu.log
