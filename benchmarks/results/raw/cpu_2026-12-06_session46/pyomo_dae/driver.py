"""Driver: python driver.py NAME  -- builds the discretized Pyomo DAE example as its script
does (solver call and plots cut off), solves it with caspar and IPOPT(casadi)."""
import sys, os
sys.path.insert(0, '/tmp/pyodae')
from harness import *

def script(fname, stop, var, d=EX):
    return lambda: exec_prefix(f'{d}/{fname}', stop, cwd=d)[var]

PATCHED = '/tmp/pyodae/examples/dae_patched'   # copies with Pyomo-6.10 compatibility edits

BUILDERS = {
    'optimal_control': script('run_Optimal_Control.py', r'^solver = ', 'm'),
    'path_constraint': script('run_Path_Constraint.py', r'^results = pyo\.SolverFactory', 'm'),
    'parameter_estimation': script('run_Parameter_Estimation.py', r'^solver = ', 'instance'),
    'pde_example': script('PDE_example.py', r'^solver = ', 'm'),
    'laplace_bvp': script('laplace_BVP.py', r'^solver = ', 'm'),
    'car_example': script('car_example.py', r'^solver = ', 'm'),
    'disease': script('run_disease.py', r'^solver = ', 'instance'),
    'distill': script('run_distill.py', r'^solver = ', 'instance'),
    'stochpdegas': script('run_stochpdegas_automatic.py', r'^for i in instance\.SCEN', 'instance'),
    'dynamic_scheduling': script('dynamic_scheduling.py', r'^solver = ', 'm'),
    'disease_patched': script('run_disease.py', r'^solver = ', 'instance', PATCHED),
    'dynamic_scheduling_patched': script('dynamic_scheduling.py', r'^solver = ', 'm', PATCHED),
}

# ---- ReactionKinetics.py: function bodies copied up to their solver.solve call
def _rk():
    return exec_prefix(f'{EX}/ReactionKinetics.py', r'^if __name__ == "__main__"')

def rk_simulation(dummy_obj=False):
    g = _rk(); Reaction, ReactionNetwork, create_kinetic_model, fdiff = (
        g['Reaction'], g['ReactionNetwork'], g['create_kinetic_model'], g['fdiff'])
    rxns = ReactionNetwork()
    rxns.add(Reaction("AtoB", "2*A -> B"))
    rxns.add(Reaction("BtoC", "B -> C"))
    model = create_kinetic_model(rxns, 60 * 60)
    A1 = 1.32e19; A2 = 1.09e13; Ea1 = 140000; Ea2 = 100000; R = 8.314; T = 330
    model.k['AtoB'].fix(A1 * pyo.exp(-Ea1 / (R * T)))
    model.k['BtoC'].fix(A2 * pyo.exp(-Ea2 / (R * T)))
    model.c[0, 'A'].fix(1); model.c[0, 'B'].fix(0); model.c[0, 'C'].fix(0)
    fdiff.apply_to(model, nfe=100)
    if dummy_obj:   # NOT in the script: constant objective added so IPOPT/caspar can run it
        model.dummy_obj = pyo.Objective(expr=0)
    return model

def rk_optimization():
    g = _rk(); Reaction, ReactionNetwork, create_kinetic_model, fdiff = (
        g['Reaction'], g['ReactionNetwork'], g['create_kinetic_model'], g['fdiff'])
    rxns = ReactionNetwork()
    rxns.add(Reaction("AtoB", "2*A -> B"))
    rxns.add(Reaction("BtoC", "B -> C"))
    model = create_kinetic_model(rxns, 60 * 60)
    A1 = 1.32e19; A2 = 1.09e13; Ea1 = 140000; Ea2 = 100000; R = 8.314
    model.T = pyo.Var(bounds=(0, None), initialize=330)
    def compute_k(m):
        yield m.k['AtoB'] == A1 * pyo.exp(-Ea1 / (R * m.T))
        yield m.k['BtoC'] == A2 * pyo.exp(-Ea2 / (R * m.T))
    model.compute_k = pyo.ConstraintList(rule=compute_k)
    model.c[0, 'A'].fix(1); model.c[0, 'B'].fix(0); model.c[0, 'C'].fix(0)
    fdiff.apply_to(model, nfe=100)
    model.obj = pyo.Objective(sense=pyo.maximize, expr=model.c[max(model.TIME), 'B'])
    return model

def rk_regression_stage1():
    g = _rk()
    src = open(f'{EX}/ReactionKinetics.py').read()
    # regression_model() body up to its first solver.solve, returned instead of solved
    body = src.split('def regression_model():')[1].split('    results = solver.solve(model, tee=True)')[0]
    ns = dict(g)
    exec('def _build():' + body + '    return model\n', ns)
    return ns['_build']()

def rk_regression_stage2_from(model):
    """second part of regression_model(): regress_Ea=True, applied to a solved stage-1 model"""
    model.Kset = pyo.Set(initialize=['k_1', 'k_2', 'k_3'])
    model.Ea = pyo.Var(model.Kset, bounds=(0, None), initialize=0)
    model.A = pyo.Var(model.Kset, bounds=(0, None), initialize=0)
    model.R = pyo.Param(initialize=8.314)
    for _e in list(model.experiment.values()):
        _e.k.fix()
        def compute_k(e, _k):
            m = e.model()
            return pyo.log(e.k[_k]) == pyo.log(m.A[_k]) - m.Ea[_k] / (m.R * e.T)
        _e.compute_k = pyo.Constraint(model.Kset, rule=compute_k)
    return model

def dynamic_scheduling_relaxed():
    # NOT in the script: the bigM model with its 2 binaries relaxed (core.relax_integer_vars),
    # as caspar's error message suggests; casadi's IPOPT ignores integrality anyway
    m = BUILDERS['dynamic_scheduling_patched']()
    pyo.TransformationFactory('core.relax_integer_vars').apply_to(m)
    return m

BUILDERS.update({
    'dynamic_scheduling_patched_relaxed': dynamic_scheduling_relaxed,
    'rk_simulation_noobj': rk_simulation,
    'rk_simulation_dummyobj': lambda: rk_simulation(True),
    'rk_optimization': rk_optimization,
    'rk_regression_stage1': rk_regression_stage1,
})

if __name__ == '__main__':
    name = sys.argv[1]
    if name == 'rk_regression_stage2':
        # stage 1 with each solver, then stage 2 from that solver's own stage-1 point
        import pyomo.environ as pyo
        rec1, mc = compare('rk_regression_stage1', rk_regression_stage1)
        # IPOPT stage 1 -> load its x into a fresh model by name
        mi = rk_regression_stage1()
        nlp, args, sense, names = nl_problem_named(mi)
        S = ca.nlpsol('S', 'ipopt', nlp, {'ipopt': {'tol': 1e-8, 'print_level': 0}, 'print_time': False})
        r = S(**args)
        for nm, xv in zip(names, np.asarray(r['x']).ravel()):
            mi.find_component(nm).set_value(float(xv), skip_validation=True)
        built = {'caspar': rk_regression_stage2_from(mc), 'ipopt': rk_regression_stage2_from(mi)}
        import copy
        # compare(): m1 (caspar) = first build() call, m2 (IPOPT) = second call
        order = iter([built['caspar'], built['ipopt']])
        compare('rk_regression_stage2', lambda: next(order))
    else:
        compare(name, BUILDERS[name])
