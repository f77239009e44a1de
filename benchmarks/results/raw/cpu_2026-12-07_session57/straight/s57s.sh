#!/usr/bin/env bash
# The straight-line elimination and solve against their loop forms on the GPU
# (dev_ldl.py, dev_solve.py): the elimination at chunk 64 with every variant, the solve at
# chunk 128, then the straight elimination at chunks 16 and 256 (compile time and speed
# by function size) in the time left (S57_LIMIT s, default 560).  Carry .stage/x (the
# pickle, PK) with this folder in it.
export PYTHONDONTWRITEBYTECODE=1 CUPY_CACHE_DIR=/tmp/cupy_s57
D=$(dirname "$0"); PK=${PK:-.stage/x/vdp_new.pkl.xz}; LIM=${S57_LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu_s57s.txt
timeout $((LIM < 240 ? LIM : 240)) python $D/dev_ldl.py $PK 64 2>&1 | tee $OUT/dev_ldl_64.jsonl
left=$((LIM - SECONDS))
[ $left -gt 40 ] && timeout $((left < 150 ? left : 150)) python $D/dev_solve.py $PK 128 2>&1 \
  | tee $OUT/dev_solve_128.jsonl
for c in 16 256; do
  left=$((LIM - SECONDS)); [ $left -lt 40 ] && break
  timeout $((left < 150 ? left : 150)) python $D/dev_ldl.py $PK $c loop,straight 2>&1 \
    | tee $OUT/dev_ldl_$c.jsonl
done
echo "done at ${SECONDS}s"
