#!/usr/bin/env bash
# The straight-line elimination against its loop forms on the GPU (dev_ldl.py): chunk 64
# with every variant, then the straight form alone at chunks 16 and 256 (the compile
# time and the speed by function size).  Carry .stage/x (the pickle) and this folder.
export PYTHONDONTWRITEBYTECODE=1 CUPY_CACHE_DIR=/tmp/cupy_s57
D=$(dirname "$0"); PK=${PK:-.stage/x/vdp_new.pkl.xz}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu_s57s.txt
timeout 240 python $D/dev_ldl.py $PK 64 2>&1 | tee $OUT/dev_ldl_64.jsonl
for c in 16 256; do
  left=$((${S57_LIMIT:-560} - SECONDS)); [ $left -lt 40 ] && break
  timeout $((left < 150 ? left : 150)) python $D/dev_ldl.py $PK $c loop,straight 2>&1 \
    | tee $OUT/dev_ldl_$c.jsonl
done
echo "done at ${SECONDS}s"
