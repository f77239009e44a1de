import sys, time, json
sys.path.insert(0, '/work/main')
import caspar_backend as cb
from caspar_backend.compiled.solve import warmup
from benchmarks.cases import cops_cases
names = set(sys.argv[1].split(',')) if len(sys.argv) > 1 and sys.argv[1] else None
scale = sys.argv[2] if len(sys.argv) > 2 else '1'
for case in cops_cases(scale, names):
    front, m, extra = case.build()
    P = cb.from_pyomo(m)
    out = {'name': case.name, 'size': case.size, 'n': P.n, 'm': P.m}
    for mode in ('no', 'yes'):
        best = None
        for rep in range(2):
            t = time.perf_counter()
            r = P.solve(tol=1e-6, print_level=0, compiled_path=mode)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        out[mode] = dict(t=round(best, 3), it=r.iterations, st=r.status, f=r.f, path=r.extra.get('path'))
    print(json.dumps(out), flush=True)
