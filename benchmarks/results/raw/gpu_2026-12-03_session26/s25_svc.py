"""SolverService on the host's cores: 64 client threads, 10^4 IK requests; throughput,
p50/p99 latency, and every answer against caspar's single solve of the same target."""
import sys, os, time, json
sys.path.insert(0, '.')
import numpy as np
from benchmarks import batch_measure as bm
from benchmarks.bench_batch import ik_workload
dev = sys.argv[1] if len(sys.argv) > 1 else 'cpu'
work = ik_workload(10000, seed=2)
P, build = bm.compile_caspar(ik_workload(2), dev)
single = bm.caspar_single(P, work, 'cpu', 1e-8)
rows = []
for workers, wait in ((None, 0.002), (4, 0.002), (8, 0.002)):
    bm.caspar_service(P, ik_workload(2000, seed=5), dev, 1e-8, 64, 1024, wait, workers)  # warm
    out = bm.caspar_service(P, work, dev, 1e-8, 64, 1024, wait, workers)
    c = bm.compare(out, single)
    r = dict(device=dev, workers=workers, max_wait=wait, per_s=round(work.size / out.total_s),
             p50_ms=round(out.extra['p50_ms'], 2), p99_ms=round(out.extra['p99_ms'], 2),
             mean_batch=round(out.extra['mean_batch'], 1), status_eq=c['status'], iter_eq=c['iter'],
             max_rel_df=c['df'], note=out.extra.get('note'))
    print(json.dumps(r), flush=True)
    rows.append(r)
out_dir = os.environ.get('OUT', '/tmp')
json.dump(rows, open(os.path.join(out_dir, f'service_{dev}.json'), 'w'), indent=1)
