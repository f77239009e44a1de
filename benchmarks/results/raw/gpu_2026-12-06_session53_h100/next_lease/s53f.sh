#!/usr/bin/env bash
# Session 53, a second lease: the CPU kernels compiled, then ab_sched.py (the batch's
# instances handed out one at a time against a static share per thread; solve_batch of IK
# batches and the service with its Python on core 0), interleaved, three rounds.
export PYTHONDONTWRITEBYTECODE=1 CASPAR_BACKGROUND_COMPILE=0 CASPAR_CACHE_DIR=/tmp/cc
export PYTHONPATH=$PWD:$PYTHONPATH
ls /tmp/site >/dev/null || exit 3
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1
echo "compiled at ${SECONDS}s"; tail -n 1 $OUT/cpu_compile.log
timeout $((590 - SECONDS)) python .stage/run/ab_sched.py 0 15,10 2>&1 | tee $OUT/ab_sched.jsonl | grep -v Warn
echo "done at ${SECONDS}s"
