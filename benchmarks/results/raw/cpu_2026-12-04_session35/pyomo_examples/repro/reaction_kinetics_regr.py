"""dae/ReactionKinetics.py regression_model (first solve, colloc nfe=100 ncp=3):
caspar and IPOPT start from the same point (identical iterations 0-1), diverge from
iteration 2 and end at different feasible local minima: caspar 1.69829, IPOPT 4.01389."""
import importlib.util, sys
import pyomo.environ as pyo
import caspar_backend
sys.path.insert(0, "/work/main")
from tests.support.pyomo_ipopt_reference import solve_reference

SRC = "/tmp/pyomo_sweep/src/examples/dae/ReactionKinetics.py"   # Pyomo/pyomo examples/dae
spec = importlib.util.spec_from_file_location("rk", SRC)
rk = importlib.util.module_from_spec(spec); spec.loader.exec_module(rk)

class _Stop(Exception):
    pass

class _Capture:                       # stands in for SolverFactory('ipopt'): returns the model
    def solve(self, model, **kw):
        raise _Stop(model)

def build():
    rk.solver = _Capture()
    rk.colloc = pyo.TransformationFactory("dae.collocation")   # the module's instance is single-use
    try:
        rk.regression_model()
    except _Stop as e:
        return e.args[0]

m = build()
res = pyo.SolverFactory("caspar").solve(m, tee="--tee" in sys.argv)
print("caspar:", res.solver.termination_condition, res.solver.statistics.black_box.number_of_iterations,
      "obj", pyo.value(m.obj))
ref = solve_reference(build())
print("IPOPT :", ref.status, ref.iterations, "obj", ref.objective)
fc = pyo.value(m.obj)
print("rel diff:", abs(fc - ref.objective) / abs(ref.objective))
for T in (150, 210):
    for k in ("k_1", "k_1_r", "k_3", "k_3_r"):
        v = m.experiment[T].k[k]
        print(f"  experiment[{T}].k[{k}]: caspar {pyo.value(v):.6g}")
