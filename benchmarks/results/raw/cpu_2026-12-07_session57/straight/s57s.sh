#!/usr/bin/env bash
# The straight-line elimination and solve against their loop forms on the GPU: the
# elimination at chunk 64 with every variant (dev_ldl.py), the solve at chunk 128
# (dev_solve.py), an iteration's elimination and three solves in one kernel (dev_iter.py),
# then the straight elimination at chunks 16 and 256, in the time left (S57_LIMIT s,
# default 560).  Carry .stage/x (the pickle, PK) with this folder in it.
export PYTHONDONTWRITEBYTECODE=1 CUPY_CACHE_DIR=/tmp/cupy_s57
D=$(dirname "$0"); PK=${PK:-.stage/x/vdp_new.pkl.xz}; LIM=${S57_LIMIT:-560}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu_s57s.txt
step() {  # step NAME CAP COMMAND...: run while more than 30 s are left, for at most CAP s
  local name=$1 cap=$2 left=$((LIM - SECONDS)); shift 2
  [ $left -lt 30 ] && return
  timeout $((left < cap ? left : cap)) "$@" 2>&1 | tee $OUT/$name.jsonl
}
step dev_ldl_64 240 python $D/dev_ldl.py $PK 64
step dev_solve_128 150 python $D/dev_solve.py $PK 128
step dev_iter 180 python $D/dev_iter.py $PK
step dev_ldl_16 150 python $D/dev_ldl.py $PK 16 loop,straight
step dev_ldl_256 150 python $D/dev_ldl.py $PK 256 loop,straight
echo "done at ${SECONDS}s"
