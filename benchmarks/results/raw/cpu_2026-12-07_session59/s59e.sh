#!/usr/bin/env bash
# Session 59: service_modes.py on branch thread-streams (.stage/ts, kernels .stage/cct),
# then the fused-kernel test that failed under xdist, serially.  Carry .stage/x .stage/cc
# .stage/ts .stage/cct.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0
cp -rn /tmp/cct/. /tmp/ccs/; cd $R/.stage/ts
PYTHONPATH=/tmp/site:$PWD CASPAR_CACHE_DIR=/tmp/ccs timeout 200 python $R/.stage/x/service_modes.py \
  2>&1 | tee $OUT/service_modes.log | grep "^{"
echo "service done at ${SECONDS}s"
cd $R
exit 0
  -p no:cacheprovider tests/kkt/test_fused_kernels.py -k "total or sums or norms" -rf > $OUT/pytest_fused.log 2>&1
echo "fused rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_fused.log
