import sys, time, json
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend as cb
from caspar_backend.compiled.dispatch import kernels_ready
kernels_ready(True)
from benchmarks.cases import acopf_cases
variant, hi = sys.argv[1], int(sys.argv[2])
for case in acopf_cases(hi, variants=(variant,)):
    _, nlp, args, extra = case.build()
    P = cb.from_casadi(nlp); kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in args}
    out = {'name': case.name, 'nm': P.n + P.m}
    R = {}
    for mode in ('no', 'yes'):
        t = time.perf_counter()
        r = P.solve(tol=1e-6, print_level=0, compiled_path=mode, **kw)
        R[mode] = r
        out[mode] = dict(t=round(time.perf_counter() - t, 4), it=r.iterations, st=r.status[:14], path=r.extra.get('path'))
    a, c = R['no'], R['yes']
    out['same'] = bool(a.status == c.status and a.iterations == c.iterations)
    out['dx'] = float(np.max(np.abs(a.x - c.x)) / max(1, np.max(np.abs(a.x)))) if a.x.size else 0.0
    print(json.dumps(out), flush=True)
