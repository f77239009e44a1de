import sys, collections
sys.path.insert(0, '/work/main')
import caspar_backend as cb
from caspar_backend.solver import linesearch as ls
from benchmarks.cases import acopf_cases, cops_cases
from tests.compiled.test_solve_compiled import _bank_problem
log = collections.Counter()
orig = ls.LineSearch._soft_resto_step
def soft(self, d, ref):
    k = orig(self, d, ref); log[f'soft->{k}'] += 1; return k
ls.LineSearch._soft_resto_step = soft
import caspar_backend.solver.ipm as ipm
names = [n for n in dir(ipm.InteriorPoint) if 'resto' in n.lower()]
print(names)
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
    tags = collections.Counter(h.tag for h in r.history if getattr(h, 'tag', None))
    print(name, r.status, r.iterations, dict(log), dict(tags), flush=True)
