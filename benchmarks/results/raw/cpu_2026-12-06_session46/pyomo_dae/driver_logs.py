"""python driver_logs.py NAME {caspar|ipopt}: print_level-5 log of one solver on one model
(stdout is the log; run with > file)."""
import sys
sys.path.insert(0, '/tmp/pyodae')
from driver import *

def build(name):
    if name.startswith('rk_regression_stage2_from_'):
        # stage 1 solved with the solver named in the suffix, stage 2 built from its point
        src = name.rsplit('_', 1)[1]
        m = rk_regression_stage1()
        if src == 'caspar':
            pyo.SolverFactory('caspar').solve(m)
        else:
            nlp, args, sense, names = nl_problem_named(m)
            S = ca.nlpsol('S', 'ipopt', nlp, {'ipopt': {'tol': 1e-8, 'print_level': 0}, 'print_time': False})
            r = S(**args)
            for nm, xv in zip(names, np.asarray(r['x']).ravel()):
                m.find_component(nm).set_value(float(xv), skip_validation=True)
        return rk_regression_stage2_from(m)
    return BUILDERS[name]()

if __name__ == '__main__':
    name, which = sys.argv[1], sys.argv[2]
    m = build(name)
    print(f'##### {name} / {which} (print_level 5)', flush=True)
    if which == 'caspar':
        opt = pyo.SolverFactory('caspar')
        res = opt.solve(m, options={'print_level': 5}, tee=True)
        print('#####', res.solver.termination_condition, pyo.value(active_obj(m)), flush=True)
    else:
        nlp, args, sense, names = nl_problem_named(m)
        S = ca.nlpsol('S', 'ipopt', nlp, {'ipopt': {'tol': 1e-8, 'print_level': 5}, 'print_time': False})
        r = S(**args)
        sys.stdout.flush()
        print('#####', S.stats()['return_status'], S.stats()['iter_count'], sense * float(r['f']), flush=True)
