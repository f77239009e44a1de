#!/usr/bin/env bash
# Next lease, any call after s51a.sh: the service on the 16-core host by kernel threads and
# the chain's LEAD (svc_lead.py: blocked clients an answered batch wakes at once; 2 was
# tuned on the 2-core VM, never on this host), one worker, twice interleaved.  s50d: LEAD 2,
# 4 threads 12.3k solves/s, p99 8.0 ms.  Each line: solves/s, p50/p99, per-batch split.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
for rep in 1 2; do
  for tl in "4 1 2" "4 1 4" "4 1 8" "8 1 2" "8 1 4" "8 1 8" "4 1 1"; do
    [ $SECONDS -gt 500 ] && break
    timeout 60 python .stage/run/svc_lead.py $tl 2>/dev/null | tail -n 1
  done
done | tee $OUT/svc_lead.txt
echo "done at ${SECONDS}s"
