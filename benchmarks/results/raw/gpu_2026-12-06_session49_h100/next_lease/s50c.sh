#!/usr/bin/env bash
# Next lease, any call after s50a.sh: the service's batches split on the 16-core host
# (svc_breakdown.py: pre / kernel / post per batch), kernel threads x workers.  Whether the
# host's 2.6-3.1 ms per batch of ~30 (s49c) is the kernel or Python waiting on the GIL.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
for tw in "1 1" "4 1" "8 1" "16 1" "8 2"; do
  timeout 90 python .stage/run/svc_breakdown.py $tw 2>/dev/null | tail -n 1
done | tee $OUT/svc_breakdown.txt
echo "done at ${SECONDS}s"
