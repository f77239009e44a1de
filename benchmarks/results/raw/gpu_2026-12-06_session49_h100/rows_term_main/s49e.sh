#!/usr/bin/env bash
# The rows' static term at 1e-4 on cuDSS (the working tree's change, no patch): the models and
# the GPU bank as s49d measured them, then pytest -m gpu outside the batch kernel's tests.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH S49D_CONFIGS="default"
ls /tmp/site >/dev/null || exit 3
git log --oneline -1 2>/dev/null | tee $OUT/head.txt
timeout 150 python .stage/run/s49d_terms.py models 2>&1 | grep -v Warning | tee $OUT/rows1e-4_models.txt
echo "models done at ${SECONDS}s"
timeout 60 python .stage/run/s49d_terms.py bank 2>&1 | grep "^bank" > $OUT/rows1e-4_bank.txt
echo "bank rows $(wc -l < $OUT/rows1e-4_bank.txt) at ${SECONDS}s"
python - <<'P'
import os
for line in open(os.environ["OUT"] + "/rows1e-4_bank.txt"):
    parts = [p.strip() for p in line.split("|")]
    ip = parts[0].split()
    v = parts[1].split(":", 1)[1].split()[:2]
    if v != ip[3:5]:
        print(line.strip()[:300])
P
timeout $((570 - SECONDS)) python -m pytest -q -m gpu -p no:cacheprovider tests --ignore=tests/compiled --ignore=tests/batch > $OUT/pytest_gpu.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 5 $OUT/pytest_gpu.log
