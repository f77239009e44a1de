#!/usr/bin/env bash
# Branch straight-ldl's first call of a lease: Van der Pol by the loops kernel and by the
# kernel linked with its generated chains (dev_patterns.py), no compile on the device.
# Prepare on the VM:  rm -rf .stage/cc && CASPAR_CACHE_DIR=$PWD/.stage/cc python
#   benchmarks/results/raw/cpu_2026-12-07_session58/patterns/build_patterns.py .stage/x/vdp_new.pkl.xz
#   && chmod -R a+r .stage/cc && cp benchmarks/results/raw/cpu_2026-12-07_session58/patterns/* .stage/x/
# (the pickle from this tree).  Carry .stage/x, .stage/cc.
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=$PWD
mkdir -p /tmp/cc && cp -r .stage/cc/. /tmp/cc/
CASPAR_CACHE_DIR=/tmp/cc timeout 240 python .stage/x/dev_patterns.py .stage/x/vdp_new.pkl.xz \
  2>&1 | tee $OUT/dev_patterns.log | grep "^{"
echo "done at ${SECONDS}s"
