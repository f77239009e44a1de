#!/bin/bash
source /work/venv/bin/activate; export PYTHONDONTWRITEBYTECODE=1
cd /tmp/pyodae; export CASPAR_NATIVE=${CASPAR_NATIVE:-}
for n in "$@"; do
  echo "=== $n $(date +%T)"
  timeout 600 python driver.py $n > logs${CASPAR_NATIVE:+_native}/$n.driver.out 2>&1; echo "rc=$? $(date +%T)"
done
