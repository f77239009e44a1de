"""dae/ReactionKinetics regression_model started from the IPOPT reference's solution:
IPOPT (same start) -> Solve_Succeeded, 544 it, 74 s, obj 1.69829;
caspar -> Maximum Number of Iterations Exceeded (3000 it, ~740 s here), restoration from it. 114.
Takes ~12 minutes on 2 shared cores (pass e.g. 400 as argv[1] for max_iter to see the stall sooner)."""
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

class _Capture:
    def solve(self, model, **kw):
        raise _Stop(model)

def build():
    rk.solver = _Capture()
    rk.colloc = pyo.TransformationFactory("dae.collocation")
    try:
        rk.regression_model()
    except _Stop as e:
        return e.args[0]

def at_ipopt_solution():
    m = build()
    ref = solve_reference(m)                       # 4.01389, Solve_Succeeded
    for v, val in ref.x.items():
        v.set_value(val, skip_validation=True)
    return m

m = at_ipopt_solution()
import os, time
opts = {"max_iter": int(sys.argv[1])} if len(sys.argv) > 1 else {}
if os.environ.get("PL"): opts["print_level"] = int(os.environ["PL"])
if os.environ.get("LS"): opts["linear_solver"] = os.environ["LS"]
t0 = time.perf_counter()
res = pyo.SolverFactory("caspar").solve(m, options=opts, load_solutions=False, tee="--tee" in sys.argv)
print("caspar from IPOPT's solution:", res.solver.termination_condition,
      res.solver.statistics.black_box.number_of_iterations, "wall", time.perf_counter() - t0)
