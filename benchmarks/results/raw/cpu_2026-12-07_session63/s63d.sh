#!/usr/bin/env bash
# session 63, last budget: pytest -m gpu on main (the joined reads) only.  $OUT/s63d.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend tests > /dev/null 2>&1
timeout 95 python -m pytest -m gpu tests -q -rfE -n 8 -p no:cacheprovider > $OUT/s63d.log 2>&1
echo "pytest rc $? at ${SECONDS}s"; tail -n 3 $OUT/s63d.log
