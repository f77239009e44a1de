"""Trace every KKT factorization of caspar's first iterations on semibatch exp2:
delta_w, delta_c, static eps, inertia (n_pos, n_neg, n_zero) vs expected; also dumps K
(the assembled matrix with its static term, factor#2 = iteration 1 at delta_w 0) to /tmp/helperA_K1.npz, QDLDL's D to /tmp/helperA_K1_D.npy.
usage: python scratch/trace_inertia.py [exp_index] [opt=value ...]"""
import sys, numpy as np, scipy.sparse as sp
import pyomo.environ as pyo
sys.path.insert(0, __import__("os").path.dirname(__file__))
from semibatch_compare import build, parse_opt
import caspar_backend
from caspar_backend.solver import inertia as inert

count = {"n": 0}
orig = inert.InertiaCorrector.factor
def factor(self):
    fact, ok = orig(self)
    k = self.kkt
    count["n"] += 1
    if count["n"] <= 25:
        print(f"factor#{count['n']}: dw={k.delta_w:.3g} dc={k.delta_c:.3g} eps={k.static_regularization:.3g} "
              f"inertia={fact.inertia} expected={k.expected_inertia()} ok={ok} solver={type(k.solver).__name__}"
              f" pivots={getattr(k.solver,'pivots',None)}", flush=True)
    if count["n"] == 2 and hasattr(k.solver, "_full_matrix"):
        try:
            sp.save_npz("/tmp/helperA_K1.npz", k.solver._full_matrix())
            np.save("/tmp/helperA_K1_D.npy", k.solver._solver.factors()[1])
            print("dumped K (with static term) of factor#2, nw", k.nw, "m", k.m, "eps", k.static_regularization)
        except Exception as e:
            print("dump failed", e)
    return fact, ok
inert.InertiaCorrector.factor = factor

i = int(sys.argv[1]) if len(sys.argv) > 1 else 1
extra = dict(parse_opt(s) for s in sys.argv[2:])
m = build(i)
res = pyo.SolverFactory("caspar").solve(m, load_solutions=False,
        options={"tol": 1e-8, "max_iter": 4, "compiled_path": "no", **extra})
