import sys, time, json
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend as cb
from caspar_backend.compiled.dispatch import kernels_ready
kernels_ready(True)
from benchmarks.cases import acopf_cases, cops_cases
which = sys.argv[1]
cases = list(acopf_cases(int(sys.argv[2]), min_buses=int(sys.argv[3]))) if which == 'acopf' else list(cops_cases(sys.argv[2]))
for case in cases:
    b = case.build()
    if b[0] == 'casadi':
        _, nlp, args, extra = b
        P = cb.from_casadi(nlp); kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in args}
    else:
        P = cb.from_pyomo(b[1]); kw = {}
    if P.n + P.m > 60000: continue
    out = {'name': case.name, 'nm': P.n + P.m}
    R = {}
    for mode in ('no', 'yes'):
        best = None
        for rep in range(2):
            t = time.perf_counter()
            r = P.solve(tol=1e-6, print_level=0, compiled_path=mode, **kw)
            dt = time.perf_counter() - t
            best = dt if best is None else min(best, dt)
        R[mode] = r
        out[mode] = dict(t=round(best, 4), it=r.iterations, st=r.status[:12], path=r.extra.get('path'))
    a, c = R['no'], R['yes']
    out['same'] = bool(a.status == c.status and a.iterations == c.iterations)
    out['dx'] = float(np.max(np.abs(a.x - c.x)) / max(1, np.max(np.abs(a.x)))) if a.x.size else 0.0
    out['df'] = abs(a.f - c.f) / max(1, abs(a.f))
    print(json.dumps(out), flush=True)
