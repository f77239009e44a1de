import sys, time; sys.path.insert(0,'/work/main')
import numpy as np
import caspar_backend as cb
from caspar_backend.compiled.dispatch import kernels_ready; kernels_ready(True)
from benchmarks.cases import acopf_cases, cops_cases
spec = sys.argv[1]
if spec == 'acopf':
    cases = list(acopf_cases(300, {'case179_goc__api'}, variants=('api',))) + list(acopf_cases(300, {'case240_pserc'}))
else:
    cases = list(cops_cases('10', {'minsurf'}))
for case in cases:
    b = case.build()
    if b[0] == 'casadi':
        P = cb.from_casadi(b[1]); kw = {k: b[2][k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg') if k in b[2]}
    else:
        P = cb.from_pyomo(b[1]); kw = {}
    t = time.perf_counter(); a = P.solve(tol=1e-6, print_level=0, compiled_path='no', **kw); t0 = time.perf_counter() - t
    t = time.perf_counter(); c = P.solve(tol=1e-6, print_level=0, compiled_path='yes', **kw); t1 = time.perf_counter() - t
    tags = ''.join(h.step_type for h in a.history)
    print(case.name, a.status, a.iterations, c.status, c.iterations, c.extra.get('path'), 'dx', float(np.max(np.abs(a.x - c.x))), 'watchdog steps', tags.count('w'), 'general %.3f compiled %.3f' % (t0, t1), flush=True)
