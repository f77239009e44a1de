#!/bin/bash
source /work/venv/bin/activate; export PYTHONDONTWRITEBYTECODE=1
cd /tmp/pyodae
for n in "$@"; do for w in caspar ipopt; do
  echo "=== $n $w $(date +%T)"
  timeout 600 python driver_logs.py $n $w > logs/$n.$w.pl5.log 2>&1; echo "rc=$? $(date +%T)"
done; done
