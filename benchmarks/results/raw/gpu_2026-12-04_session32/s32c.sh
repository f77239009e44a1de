export LD_LIBRARY_PATH=/tmp/site/nvidia/cu13/lib PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/tmp/site:$PWD
git -C . log --oneline -1 > $OUT/head.txt 2>&1
( time python -c "from caspar_backend.compiled.solve import warmup; print('cpu', warmup())" ) > $OUT/warm_cpu.txt 2>&1 &
( time python -c "
import time; t=time.perf_counter()
from caspar_backend.compiled.cuda.launch import kernel; kernel(False); print('cuda rows kernel', time.perf_counter()-t)" ) > $OUT/warm_cuda.txt 2>&1
wait
cat $OUT/warm_cpu.txt $OUT/warm_cuda.txt | grep -v "^$\|user\|sys"
timeout 70 python -m pytest -q -m gpu tests/compiled/test_cuda_batch.py -p no:cacheprovider -x > $OUT/gpu_tests.txt 2>&1
tail -3 $OUT/gpu_tests.txt
cat > /tmp/vdp_gpu.py <<'PY'
import sys, time, numpy as np
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import vdp_workload, ik_workload
for name, w in (("vdp", vdp_workload(1000)), ("ik", ik_workload(10000, seed=2))):
    P, _ = bm.compile_caspar(w, "cuda")
    ts = []
    for i in range(4):
        t = time.perf_counter(); r = P.solve_batch(p=w.params, print_level=0, tol=1e-8); ts.append(time.perf_counter() - t)
    print(name, w.params.shape[0], "times", [round(x, 4) for x in ts], set(r.path), "iters max", int(np.max(r.iterations)), "status", {s: int(np.sum(r.status == s)) for s in set(r.status)}, flush=True)
PY
timeout 60 python /tmp/vdp_gpu.py > $OUT/vdp_gpu.txt 2>&1
grep -v Warn $OUT/vdp_gpu.txt | grep -v "warn(" | tail -4
