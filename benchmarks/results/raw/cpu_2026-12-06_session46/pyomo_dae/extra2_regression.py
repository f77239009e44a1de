"""Controls for the cross-start check + variable differences for stage 2 from a common point."""
import sys, json
sys.path.insert(0, '/tmp/pyodae')
exec(open('/tmp/pyodae/extra_regression.py').read().split('out = {}')[0])
from pyomo.util.infeasible import log_infeasible_constraints
out = {}
mc = rk_regression_stage1(); out['stage1_caspar'] = caspar_solve(mc); out['stage1_caspar'].pop('log_tail')
mi = rk_regression_stage1(); out['stage1_ipopt'] = ipopt_solve_load(mi)
a = copy_values(mc, rk_regression_stage1()); out['stage1_caspar_from_caspar_point'] = caspar_solve(a, 'stage1_from_caspar_point'); out['stage1_caspar_from_caspar_point'].pop('log_tail')
b = copy_values(mi, rk_regression_stage1()); out['stage1_ipopt_from_ipopt_point'] = ipopt_solve_load(b)
m2c = rk_regression_stage2_from(copy_values(mc, rk_regression_stage1()))
m2i = rk_regression_stage2_from(copy_values(mc, rk_regression_stage1()))
out['stage2_from_caspar_point_caspar'] = caspar_solve(m2c); out['stage2_from_caspar_point_caspar'].pop('log_tail')
out['stage2_from_caspar_point_ipopt'] = ipopt_solve_load(m2i)
dmax, worst = 0, None
for v in m2c.component_data_objects(pyo.Var):
    if v.value is None: continue
    w = m2i.find_component(v.name)
    d = abs(v.value - w.value)
    if d > dmax: dmax, worst = d, v.name
out['stage2_common_start_max_abs_dx'] = (dmax, worst)
def maxres(m):
    r, w = 0, None
    for c in m.component_data_objects(pyo.Constraint, active=True):
        b = pyo.value(c.body); lo = pyo.value(c.lower) if c.has_lb() else None; up = pyo.value(c.upper) if c.has_ub() else None
        v = max((lo - b) if lo is not None else 0, (b - up) if up is not None else 0)
        if v > r: r, w = v, c.name
    return r, w
out['stage2_caspar_point_max_con_violation'] = maxres(m2c)
out['stage2_ipopt_point_max_con_violation'] = maxres(m2i)
out['stage2_caspar_k_fixed_same_as_ipopt'] = max(abs(m2c.find_component(v.name).value - v.value) for e in m2i.experiment.values() for v in e.k.values())
print(json.dumps(out, indent=1, default=str))
json.dump(out, open('/tmp/pyodae/results/rk_regression_controls.json', 'w'), indent=1, default=str)
