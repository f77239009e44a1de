import sys, json
sys.path.insert(0, '/work/main')
import numpy as np
import caspar_backend as cb
import caspar_backend.compiled.solve as cs
from caspar_backend.batch.state import EJECT_REASONS
from benchmarks.cases import acopf_cases, cops_cases
import caspar_backend.compiled.kernels.ipm as kipm
orig = kipm.solve_instance
last = {}
def spy(*a):
    r = orig(*a)
    last['r'] = r
    return r
cs_solve_instance = None
import caspar_backend.compiled.kernels.ipm
from caspar_backend.compiled.dispatch import kernels_ready
kernels_ready(True)
caspar_backend.compiled.kernels.ipm.solve_instance = spy
which = sys.argv[1]
cases = list(acopf_cases(2000, set(sys.argv[2].split(',')))) if which == 'acopf' else list(cops_cases(sys.argv[3], set(sys.argv[2].split(','))))
for case in cases:
    b = case.build()
    if b[0] == 'casadi':
        _, nlp, args, extra = b
        P = cb.from_casadi(nlp); kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in args}
    else:
        P = cb.from_pyomo(b[1]); kw = {}
    last.clear()
    r = P.solve(tol=1e-6, print_level=0, compiled_path='yes', **kw)
    code, its, f = last.get('r', (None, None, None))
    print(case.name, r.extra.get('path'), 'code', code, 'it', its, EJECT_REASONS[-int(code)] if code is not None and code < 0 else '', flush=True)
