#!/usr/bin/env bash
# Same warm machine after s50b (whole suite ran past 580 s): the batch kernel's GPU tests at HEAD
# (its CUDA compile cached in /tmp/cc by s50b), then the service's batches split (s50c).
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
timeout 300 python -m pytest -q -m gpu -p no:cacheprovider tests/compiled tests/batch > $OUT/pytest_gpu_batch.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 4 $OUT/pytest_gpu_batch.log
for tw in "1 1" "4 1" "16 1" "8 2"; do
  [ $SECONDS -gt 440 ] && break
  timeout 80 python .stage/run/svc_breakdown.py $tw 2>/dev/null | tail -n 1
done | tee $OUT/svc_breakdown.txt
echo "done at ${SECONDS}s"
