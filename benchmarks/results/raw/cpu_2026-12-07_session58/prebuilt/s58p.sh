#!/usr/bin/env bash
# First call of a lease: s58c.sh (the VM-built cubins through the fake launcher) in
# ${LIMIT:-250} s, then the library's launch path with the kernels prebuilt on the VM
# (dev_check.py; .stage/cc is `CASPAR_CACHE_DIR=.stage/cc python -m caspar_backend.compiled
# --cuda-prebuild 90` of this tree).  Carry .stage/main, .stage/x, .stage/cc.
export PYTHONDONTWRITEBYTECODE=1
X=$PWD/.stage/x
LIMIT=${LIMIT:-250} bash $X/cubins/s58c.sh
echo "== prebuilt at ${SECONDS}s"
mkdir -p /tmp/cc && cp -rn $PWD/.stage/cc/. /tmp/cc/
CASPAR_CACHE_DIR=/tmp/cc timeout 150 python $X/prebuilt/dev_check.py \
  $X/vdp_new.pkl.xz 2>&1 | tee $OUT/prebuilt.jsonl | tail -12
echo "done at ${SECONDS}s"
