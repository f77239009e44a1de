#!/usr/bin/env bash
# Session 38, call B: main at HEAD (the kernels' hand-over change): compile, CUDA batch tests, launch sweep, service sweep.
export PYTHONPATH=$PWD:$PYTHONPATH CASPAR_CACHE_DIR=/tmp/cc CASPAR_BACKGROUND_COMPILE=0 PYTHONDONTWRITEBYTECODE=1
git log --oneline -1 2>/dev/null | cat
python -m caspar_backend.compiled > $OUT/cpu_compile.log 2>&1 &
python -m caspar_backend.compiled --cuda > $OUT/cuda_compile.log 2>&1
wait
cat $OUT/cpu_compile.log $OUT/cuda_compile.log
timeout 200 python -m pytest -q -m gpu -p no:cacheprovider tests/adapters tests/batch tests/compiled/test_cuda_batch.py tests/compiled/test_cuda_loops.py > $OUT/pytest_part1.log 2>&1; echo "part1 rc $?"; tail -n 1 $OUT/pytest_part1.log
timeout 60 python benchmarks/bench_kernel_latency.py --case vdp --sizes 1000 --threads 1,2,4,8,16,32 --repeats 2 > $OUT/vdp_threads.jsonl 2> $OUT/vdp_threads.err; echo "threads rc $?"
python - <<'PY'
import json
for l in open('/root/out/vdp_threads.jsonl' if False else __import__('os').environ['OUT'] + '/vdp_threads.jsonl'):
    d = json.loads(l); print(d.get('B'), d.get('threads'), d.get('kernel_ms'), d.get('solve_batch_s'), d.get('ms_per_max_iteration'))
PY
timeout 200 python .stage/run/svc.py 2>&1 | grep -v Warn | tee $OUT/svc_sweep.jsonl | tail -20
