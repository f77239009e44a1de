import sys, collections
sys.path.insert(0, '/work/main')
import caspar_backend as cb
from caspar_backend.solver import inertia as inr
from caspar_backend.kkt.augmented import AugmentedKKT
from benchmarks.cases import acopf_cases, cops_cases
from tests.compiled.test_solve_compiled import _bank_problem
log = collections.Counter()
first = {}
def wrap(cls, name):
    f = getattr(cls, name)
    def g(self, *a, **k):
        r = f(self, *a, **k)
        key = f"{name}->{'None' if r is None else (r if isinstance(r, bool) else 'ok')}"
        log[key] += 1
        return r
    setattr(cls, name, g)
wrap(inr.InertiaCorrector, '_solve_with_smaller_static_term')
wrap(AugmentedKKT, 'increase_quality')
wrap(AugmentedKKT, 'enable_pivoting')
wrap(AugmentedKKT, 'factorize_accurate')
for spec in sys.argv[1:]:
    kind, name = spec.split(':')
    log.clear()
    if kind == 'acopf':
        case = next(iter(acopf_cases(2000, {name})))
        _, nlp, args, extra = case.build()
        P = cb.from_casadi(nlp); kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg', 'p') if k in args}
    elif kind == 'cops':
        case = next(iter(cops_cases('1', {name})))
        P = cb.from_pyomo(case.build()[1]); kw = {}
    else:
        P, d, b = _bank_problem(name); kw = dict(x0=d['x0'], **b)
    r = P.solve(tol=1e-6, print_level=0, compiled_path='no', **kw)
    print(name, r.status, r.iterations, dict(log), flush=True)
