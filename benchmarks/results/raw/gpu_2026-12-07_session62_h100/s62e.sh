#!/usr/bin/env bash
# device='auto' break-even against the CPU's compiled path (its kernels compiled on this
# host first, as `caspar warmup` or the background compile leaves them), sizes <= 60,000;
# then, on an H200, s62b's must-show runs.  Carry .stage/x .stage/cc; $OUT/s62e.tgz.
source .stage/x/env.sh
unset PYTHONDONTWRITEBYTECODE
python -m compileall -q -j 16 /tmp/site caspar_backend benchmarks > /dev/null 2>&1
mkdir -p $OUT/e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/e/gpu.txt
lscpu | grep -E "Model name|^CPU\(s\)" >> $OUT/e/gpu.txt
timeout 240 python -m caspar_backend.compiled > $OUT/e/compile.log 2>&1
echo "compile rc $? at ${SECONDS}s"; tail -2 $OUT/e/compile.log
timeout 240 python .stage/x/s62_auto.py cpu,cuda 60000 > $OUT/e/auto.jsonl 2> $OUT/e/auto.err
echo "auto rc $? at ${SECONDS}s"; cut -c1-120 $OUT/e/auto.jsonl
tar -czf $OUT/s62e.tgz -C $OUT e; rm -rf $OUT/e
if grep -q H200 <(nvidia-smi --query-gpu=name --format=csv,noheader); then bash .stage/x/s62b.sh; fi
