#!/bin/bash
source /work/venv/bin/activate; export PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg PYTHONPATH=/tmp/casadi_sweep/pylib2
cd /tmp/casadi_sweep
for f in "$@"; do
  for v in ipopt caspar; do
    p=ex/$v/$f.py; [ -f $p ] || continue
    s=$(date +%s.%N)
    timeout 180 python runner.py $p logs/$v.$f.jsonl > logs/$v.$f.out 2>&1; rc=$?
    e=$(date +%s.%N)
    echo "$v $f rc=$rc wall=$(echo "$e - $s" | bc)" >> logs/summary.txt
  done
done
