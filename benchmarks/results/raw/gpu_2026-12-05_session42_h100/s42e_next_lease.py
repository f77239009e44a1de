"""Session 42, final: the limited-memory Hessian (IPOPT's updater) on CuPy against the CPU."""
import sys, os
sys.path.insert(0, os.getcwd())
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar
P = {p.name: p for p in bank(include_slow=False)}
bad = 0
for name in ["hs016", "hs029", "hs071", "needs_restoration_exp", "infeasible_disc_halfplane",
             "restoration_to_local_infeasibility_wb", "optimal_control_200"]:
    p = P[name]
    d = dict(p.build(), options=p.options)
    opts = {"hessian_approximation": "limited-memory"}
    a = run_caspar(d, dict(opts, compiled_path="no"))
    b = run_caspar(d, dict(opts, device="cuda"))
    same = (a.status, a.iterations) == (b.status, b.iterations)
    bad += not same
    print(name, a.status, a.iterations, b.status, b.iterations, "same" if same else "DIFF", flush=True)
print("differing", bad)
