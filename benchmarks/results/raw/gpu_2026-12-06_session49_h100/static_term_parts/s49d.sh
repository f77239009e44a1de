#!/usr/bin/env bash
# cuDSS's static term by part (s49d_terms.py): models first, then the GPU bank.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH S49D_CONFIGS="default,rows*1e-2,rows*1e-4"
ls /tmp/site >/dev/null || exit 3
timeout 330 python .stage/run/s49d_terms.py models 2>&1 | grep -v Warning | tee $OUT/terms2_models.txt
echo "models done at ${SECONDS}s"
timeout $((540 - SECONDS)) python .stage/run/s49d_terms.py bank 2>&1 | grep "^bank" > $OUT/terms2_bank.txt
echo "bank rows $(wc -l < $OUT/terms2_bank.txt) at ${SECONDS}s"
python - <<'P'
import os
for line in open(os.environ["OUT"] + "/terms2_bank.txt"):
    parts = [p.strip() for p in line.split("|")]
    vals = [p.split(":", 1)[1].split()[:2] for p in parts[1:]]
    ip = parts[0].split()
    if not (vals[0] == vals[1] == vals[2]) or vals[0] != ip[3:5]:
        print(line.strip()[:400])
P
