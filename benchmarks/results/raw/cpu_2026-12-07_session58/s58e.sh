#!/usr/bin/env bash
# After s58d (staged in /tmp/site): the GPU service with 1, 2, 3 workers
# (service_streams.py), then `pytest -m gpu` of the streams test.  Carry .stage/x,
# .stage/cc (the kernels prebuilt from this tree).
export PYTHONPATH=/tmp/site:$PWD:$PYTHONPATH
export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib:$LD_LIBRARY_PATH
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
mkdir -p /tmp/cc && cp -rn $PWD/.stage/cc/. /tmp/cc/
ls /tmp/site >/dev/null || exit 3
timeout 300 python .stage/x/service_streams.py 3 2>&1 | tee $OUT/service_streams.log | grep "^{"
echo "service done at ${SECONDS}s"
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled/test_cuda_streams.py \
  -rf > $OUT/pytest_streams.log 2>&1
echo "streams pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/pytest_streams.log
