# Rank of the constraint Jacobian of dae_collocation's NLP at x0 and at IPOPT's solution
import os, runpy, numpy as np, casadi as ca, matplotlib; matplotlib.use("Agg")
import matplotlib.pyplot as plt; plt.show = lambda *a, **k: None
_n = ca.nlpsol
class Stop(Exception): pass
def hook(name, solver, nlp, opts):
    S = _n(name, solver, nlp, {**opts, "ipopt.print_level": 0, "print_time": False, "ipopt.linear_solver": "mumps"})
    J = ca.Function("J", [nlp["x"]], [ca.jacobian(nlp["g"], nlp["x"])])
    class W:
        def __call__(self, **kw):
            r = S(**kw)
            for tag, x in (("x0", kw.get("x0", 0)), ("x*", r["x"])):
                A = np.array(J(ca.DM(x) if not np.isscalar(x) else ca.DM.ones(nlp["x"].numel())*x))
                lb = np.array(ca.DM(kw["lbx"])).ravel(); ub = np.array(ca.DM(kw["ubx"])).ravel()
                A = A[:, lb != ub]
                s = np.linalg.svd(A, compute_uv=False)
                print(f"{tag}: J {A.shape}, rank(tol 1e-10*smax) = {np.sum(s > 1e-10*s[0])}, "
                      f"smallest singular values {s[-4:]}, smax {s[0]:.3e}")
            raise Stop
    return W()
ca.nlpsol = hook
p = "/tmp/casadi_sweep/src/docs/examples/python/dae_collocation.py"; os.chdir(os.path.dirname(p))
try: runpy.run_path(p, run_name="__main__")
except Stop: pass
