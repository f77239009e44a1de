"""Session 42: the general path's adaptive barrier update (quality-function, probing) and
limited-memory defaults on CuPy against the CPU, bank problems: status and iterations."""
import sys, os
sys.path.insert(0, os.getcwd())
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar
P = {p.name: p for p in bank(include_slow=False)}
bad = 0
for name in ["hs071", "hs016", "hs033", "hs076", "optimal_control_200", "ring_inequalities",
             "needs_restoration_exp", "infeasible_disc_halfplane"]:
    p = P[name]
    d = dict(p.build(), options=p.options)
    for opts in ({"mu_strategy": "adaptive"}, {"mu_strategy": "adaptive", "mu_oracle": "probing"},
                 {"hessian_approximation": "limited-memory"}, {"expect_infeasible_problem": "yes"}):
        a = run_caspar(d, dict(opts, compiled_path="no"))
        b = run_caspar(d, dict(opts, device="cuda"))
        same = (a.status, a.iterations) == (b.status, b.iterations)
        bad += not same
        print(name, opts, a.status, a.iterations, b.status, b.iterations, "same" if same else "DIFF", flush=True)
print("differing", bad)
