#!/usr/bin/env bash
# Session 60, second lease: cuDSS's analysis ahead (linsolve/cudss_ahead.py) on main's
# working tree.  gil_probe.py; the GPU tests of the analysis ahead and the cuDSS/KKT
# tests; then fresh processes off/on alternating: case9241_pegase x2 each, case78484 x1
# each, and case9241's first solve under cProfile (ahead on).  Carry .stage/x .stage/ccg.
R=$PWD
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_CACHE_DIR=/tmp/ccg
mkdir -p /tmp/ccg && cp -rn $R/.stage/ccg/. /tmp/ccg/ 2>/dev/null
export PYTHONPATH=/tmp/site:$PWD
timeout 60 python .stage/x/gil_probe.py 2>&1 | tee $OUT/gil_probe.log | tail -2
timeout 150 python -m pytest -q -m gpu -p no:cacheprovider tests/kkt/test_cudss_ahead.py \
  tests/kkt/test_cudss_handle.py -rfE > $OUT/pytest_ahead.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 4 $OUT/pytest_ahead.log
for a in off on off on; do
  timeout 60 python .stage/x/first_solve.py case9241_pegase $a 2>>$OUT/first.err | tee -a $OUT/first_9241.log
done
echo "9241 at ${SECONDS}s"
timeout 60 python .stage/x/first_solve.py case9241_pegase on $OUT/profile_9241_on.txt 2>>$OUT/first.err | tee -a $OUT/first_9241_profiled.log
for a in off on; do
  timeout 100 python .stage/x/first_solve.py case78484_epigrids $a 2>>$OUT/first.err | tee -a $OUT/first_78484.log
done
echo "done at ${SECONDS}s"
