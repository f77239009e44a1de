"""dae/stochpdegas_automatic (run_stochpdegas_automatic.py: .dat, FD nfe=1 x 47):
IPOPT stops at Solved_To_Acceptable_Level after 526 iterations (obj 8.957406e-3),
caspar reports Optimal after 157 (obj 8.958360e-3): relative difference 1.1e-4.
IPOPT's log shows Hessian regularization in 473 of its iterations; caspar's in none."""
import os, runpy, sys
import pyomo.environ as pyo
import caspar_backend
sys.path.insert(0, "/work/main")
from tests.support.pyomo_ipopt_reference import solve_reference

D = "/tmp/pyomo_sweep/src/examples/dae"     # Pyomo/pyomo examples/dae

def build():
    class _Stop(Exception):
        pass
    class _Capture:
        def solve(self, model, **kw):
            raise _Stop(model)
    real = pyo.SolverFactory
    pyo.SolverFactory = lambda *a, **k: _Capture()
    cwd = os.getcwd(); os.chdir(D); sys.path.insert(0, D)
    try:
        runpy.run_path(os.path.join(D, "run_stochpdegas_automatic.py"), run_name="__main__")
    except _Stop as e:
        return e.args[0]
    finally:
        pyo.SolverFactory = real; os.chdir(cwd); sys.path.remove(D)

m = build()
res = pyo.SolverFactory("caspar").solve(m, tee="--tee" in sys.argv)
print("caspar:", res.solver.termination_condition, res.solver.statistics.black_box.number_of_iterations,
      "obj", pyo.value(m.obj))
ref = solve_reference(build())
print("IPOPT :", ref.status, ref.iterations, "obj", ref.objective)
