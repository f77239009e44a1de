#!/usr/bin/env bash
# Next lease, any call after s51a.sh: the service's batches split (svc_breakdown.py, copied
# from ../) by kernel threads x workers, each configuration twice, interleaved: whether the
# default of half the cores (8 here) or 4 (s50d: 12.3k solves/s, p99 8.0 ms) serves more.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
for rep in 1 2; do
  for tw in "4 1" "8 1" "6 1" "8 2"; do
    [ $SECONDS -gt 480 ] && break
    timeout 80 python .stage/run/svc_breakdown.py $tw 2>/dev/null | tail -n 1
  done
done | tee $OUT/svc_breakdown.txt
echo "done at ${SECONDS}s"
