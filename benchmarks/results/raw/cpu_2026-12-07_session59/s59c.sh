#!/usr/bin/env bash
# Session 59: `pytest -m gpu tests` in full on main (this tree; kernels prebuilt in
# .stage/cc), six xdist workers sharing the GPU; a second call runs the node ids in
# .stage/x/rest.txt (what failed or did not run; N workers, default 1).  Carry .stage/x .stage/cc.
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1
export CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc PYTHONPATH=/tmp/site:$PWD
ls /tmp/site/xdist >/dev/null || python3 -m pip install -q --no-index --no-deps --target /tmp/site .stage/x/wheels/*.whl
mkdir -p /tmp/cc && cp -rn .stage/cc/. /tmp/cc/
python -m pytest --version
if [ -f .stage/x/rest.txt ]; then
  timeout 560 python -m pytest -m gpu -v -rfE -n ${N:-1} $(cat .stage/x/rest.txt) > $OUT/pytest_gpu_rest.log 2>&1
  echo "rc $? at ${SECONDS}s"; tail -n 25 $OUT/pytest_gpu_rest.log
else
  timeout 560 python -m pytest -m gpu tests -v -rfE -n ${N:-6} --durations=30 > $OUT/pytest_gpu.log 2>&1
  echo "rc $? at ${SECONDS}s"; tail -n 40 $OUT/pytest_gpu.log
fi
