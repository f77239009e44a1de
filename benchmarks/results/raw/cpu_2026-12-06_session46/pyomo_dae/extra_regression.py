"""ReactionKinetics regression: cross-start checks.
(1) stage 1: IPOPT started from caspar's stage-1 point; caspar started from IPOPT's stage-1 point.
(2) stage 2 from a common start: both solvers start stage 2 from the SAME stage-1 point
    (once caspar's, once IPOPT's)."""
import sys, json, time
sys.path.insert(0, '/tmp/pyodae')
from driver import *

def ipopt_solve_load(m):
    nlp, args, sense, names = nl_problem_named(m)
    S = ca.nlpsol('S', 'ipopt', nlp, {'ipopt': {'tol': 1e-8, 'print_level': 0}, 'print_time': False})
    t = time.perf_counter(); r = S(**args); dt = time.perf_counter() - t
    for nm, xv in zip(names, np.asarray(r['x']).ravel()):
        m.find_component(nm).set_value(float(xv), skip_validation=True)
    st = S.stats()
    return dict(status=st['return_status'], iters=st['iter_count'], obj=sense * float(r['f']), t=dt)

def caspar_solve(m, tag=None):
    opt = pyo.SolverFactory('caspar'); t = time.perf_counter()
    res = opt.solve(m, load_solutions=False); dt = time.perf_counter() - t
    log = getattr(opt, '_log', '') or getattr(res, 'solver_log', '') or ''
    if tag:
        open(f'/tmp/pyodae/logs/extra_{tag}.caspar.log', 'w').write(log)
    it = re.findall(r'Number of Iterations\.*:\s*(\d+)', log)
    ok = True
    try:
        m.solutions.load_from(res)
    except Exception as e:
        ok = f'load failed: {e}'
    return dict(status=str(res.solver.termination_condition), solver_status=str(res.solver.status),
                message=str(res.solver.message), iters=int(it[-1]) if it else None,
                obj=pyo.value(active_obj(m)), t=dt, loaded=ok, log_tail=log[-1500:])

def copy_values(src, dst):
    for v in src.component_data_objects(pyo.Var):
        dst.find_component(v.name).set_value(v.value, skip_validation=True)
    return dst

out = {}
mc = rk_regression_stage1(); out['stage1_caspar'] = caspar_solve(mc, 'stage1')
mi = rk_regression_stage1(); out['stage1_ipopt'] = ipopt_solve_load(mi)
# cross starts
a = copy_values(mc, rk_regression_stage1()); out['stage1_ipopt_from_caspar_point'] = ipopt_solve_load(a)
b = copy_values(mi, rk_regression_stage1()); out['stage1_caspar_from_ipopt_point'] = caspar_solve(b, 'stage1_from_ipopt_point')
print(json.dumps(out, indent=1), flush=True)
# stage 2 from common points
for src, m in (('caspar_point', mc), ('ipopt_point', mi)):
    m2c = rk_regression_stage2_from(copy_values(m, rk_regression_stage1())); m2i = rk_regression_stage2_from(copy_values(m, rk_regression_stage1()))
    out[f'stage2_from_{src}_caspar'] = caspar_solve(m2c, f'stage2_from_{src}')
    out[f'stage2_from_{src}_ipopt'] = ipopt_solve_load(m2i)
    print(json.dumps({k: out[k] for k in out if k.startswith(f'stage2_from_{src}')}, indent=1), flush=True)
json.dump(out, open('/tmp/pyodae/results/rk_regression_crossstart.json', 'w'), indent=1)
