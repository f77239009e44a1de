import sys, time, json
sys.path.insert(0, '/work/main')
import caspar_backend as cb
from benchmarks.cases import acopf_cases
lo, hi = int(sys.argv[1]), int(sys.argv[2])
for case in acopf_cases(hi, min_buses=lo):
    front, nlp, args, extra = case.build()
    P = cb.from_casadi(nlp)
    kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in args}
    out = {'name': case.name, 'n': P.n, 'm': P.m}
    for mode in ('no', 'yes'):
        best = None
        for rep in range(2):
            t = time.perf_counter()
            r = P.solve(tol=1e-6, print_level=0, compiled_path=mode, **kw)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        out[mode] = dict(t=round(best, 3), it=r.iterations, st=r.status, f=r.f, path=r.extra.get('path'))
    print(json.dumps(out), flush=True)
