import sys; sys.path.insert(0,'/work/main')
import numpy as np
from tests.compiled.test_solve_compiled import _bank_problem
from tests.support.problem_bank import bank
from caspar_backend.compiled.solve import solve_compiled
from caspar_backend.compiled.dispatch import kernels_ready; kernels_ready(True)
import caspar_backend.compiled.kernels.ipm as kipm
from caspar_backend.batch.state import EJECT_REASONS
orig = kipm.solve_instance
last = {}
def spy(*a):
    r = orig(*a); last['r'] = r; return r
kipm.solve_instance = spy
import caspar_backend.compiled.solve as cs
for bp in bank(include_slow=False):
    try:
        problem, d, bounds = _bank_problem(bp.name)
    except Exception as ex:
        print(bp.name, 'build fail', ex); continue
    last.clear()
    r = solve_compiled(problem, d["x0"], None, **bounds, print_level=0, **dict(bp.options))
    code = last.get('r', (None,))[0]
    e = problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no", **dict(bp.options))
    if r is None:
        print(bp.name, 'ejected', code, EJECT_REASONS[-int(code)] if code is not None and -12 < code < 0 else '')
    else:
        same = (r.status, r.iterations) == (e.status, e.iterations)
        print(bp.name, 'compiled', same, r.status, r.iterations, float(np.max(np.abs(r.x - e.x))) if r.x.size else 0)
