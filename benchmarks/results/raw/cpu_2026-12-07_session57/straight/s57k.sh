#!/usr/bin/env bash
# klink_time.py on the device: this tree's kernel with the chains as externs, relocatable,
# linked with the stub and with Van der Pol's generated code; timed against each other.
# Carry .stage/x (the pickle) with this folder in it.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0
D=$(dirname "$0"); PK=${PK:-.stage/x/vdp_new.pkl.xz}
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu_s57k.txt
which ptxas nvcc nvlink
timeout ${K_LIMIT:-560} python $D/klink_time.py $PK $OUT/klink 2>&1 | tee $OUT/klink.jsonl
echo "done at ${SECONDS}s"
