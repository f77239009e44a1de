#!/usr/bin/env bash
# issue 21 item 3: device='auto''s break-even re-measured (s62_auto.py), then a cProfile of a
# case9241 re-solve.  Carry .stage/x .stage/cc; one archive back ($OUT/s62c.tgz).
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/r
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/r/gpu.txt
timeout 400 python .stage/x/s62_auto.py > $OUT/r/auto.jsonl 2> $OUT/r/auto.err
echo "auto rc $? at ${SECONDS}s"; cat $OUT/r/auto.jsonl | cut -c1-200
tar -czf $OUT/s62c.tgz -C $OUT r; rm -rf $OUT/r
