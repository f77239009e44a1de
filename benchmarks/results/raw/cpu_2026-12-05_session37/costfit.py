import sys, time, json
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend as cb
import caspar_backend.compiled.solve as cs
cs.TIME_BUDGET = 1000.0
from benchmarks.cases import cops_cases
from caspar_backend.adapters.casadi.models import vanderpol_collocation
probs = []
for scale, names in (('1', 'chain,steering,gasoil,methanol,torsion,minsurf,polygon,elec'), ('10', 'chain,steering,methanol,torsion,minsurf')):
    for case in cops_cases(scale, set(names.split(','))):
        front, m, extra = case.build()
        probs.append((case.name + '@' + scale, cb.from_pyomo(m)))
for N in (20, 100, 400):
    nlp, args = vanderpol_collocation(N)
    a = {k: v for k, v in args.items() if k != 'data'}
    P = cb.from_casadi(nlp, **{k: v for k, v in a.items() if k in ('x0','lbx','ubx','lbg','ubg','p')}) if False else None
    try:
        P = cb.from_casadi(nlp)
        probs.append((f'vdp{N}', (P, a)))
    except Exception as e:
        print('vdp fail', e)
for name, P in probs:
    kw = {}
    if isinstance(P, tuple):
        P, a = P
        kw = {k: a[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in a}
    r = P.solve(tol=1e-6, print_level=0, compiled_path='yes', **kw)
    best = None
    for _ in range(3):
        r = P.solve(tol=1e-6, print_level=0, compiled_path='yes', **kw)
        if r.extra.get('path') != 'compiled':
            break
        c = r.timings['compiled'] / max(r.iterations, 1)
        best = c if best is None else min(best, c)
    lays = [l for l in cs._layouts[P].values() if l is not None]
    if not lays or best is None:
        print(json.dumps(dict(name=name, path=r.extra.get('path')))); continue
    lay = lays[0]
    sz = lay.sizes
    from caspar_backend.compiled.kernels import slots
    k = list(slots.INT_SLOTS).index('L_INDPTR')
    Lp = lay.Ib[lay.IO[k]:lay.IO[k+1]]
    Lnz = np.diff(Lp)
    flops = int((Lnz.astype(float)**2).sum())
    print(json.dumps(dict(name=name, it=r.iterations, us_per_it=round(best * 1e6, 1), nkkt=sz['nkkt'], nnzK=sz['nnzK'], nnzL=sz['nnzL'], flops=flops)), flush=True)
