# Compare the Lagrangian Hessian (and gradient/Jacobian) that IPOPT's casadi nlpsol and caspar's
# nlpsol evaluate for CasADi's dae_single_shooting.py NLP (IDAS integrator, 20 controls).
import os, runpy, numpy as np, casadi as ca, matplotlib; matplotlib.use("Agg")
from caspar_backend.casadi import nlpsol as cp_nlpsol
_n = ca.nlpsol
class Stop(Exception): pass
def hook(name, solver, nlp, opts):
    S = _n(name, "ipopt", nlp, {"ipopt.print_level": 0, "print_time": False})
    C = cp_nlpsol(name, "caspar", nlp, {"caspar.print_level": 0})
    ev = C.problem.evaluator("cpu")
    nx, ng = nlp["x"].numel(), nlp["g"].numel()
    H = S.get_function("nlp_hess_l"); G = S.get_function("nlp_grad_f"); Jf = S.get_function("nlp_jac_g")
    rng = np.random.default_rng(0)
    for tag, x, lam, sig in (("x0=0, lam=0, sigma=1", np.zeros(nx), np.zeros(ng), 1.0),
                             ("x0=0, lam=1, sigma=1", np.zeros(nx), np.ones(ng), 1.0),
                             ("x random, lam random", rng.uniform(-.5, .5, nx), rng.normal(size=ng), 1.0)):
        Hi = np.array(ca.DM(H(x, [], sig, lam))); Hi = np.triu(Hi) + np.triu(Hi, 1).T
        Hc = ev.hess(x, lam, obj_factor=sig); Hc = Hc.toarray() if hasattr(Hc, "toarray") else np.asarray(Hc)
        if np.allclose(np.tril(Hc, -1), 0): Hc = Hc + np.triu(Hc, 1).T
        if np.allclose(np.triu(Hc, 1), 0): Hc = Hc + np.tril(Hc, -1).T
        gi = np.array(G(x, [])[1]).ravel(); gc = np.asarray(ev.grad(x)).ravel()
        Ji = np.array(Jf(x, [])[1]); Jc = ev.jac(x); Jc = Jc.toarray() if hasattr(Jc, "toarray") else np.asarray(Jc)
        ei, ec = np.linalg.eigvalsh(Hi), np.linalg.eigvalsh(Hc)
        # central differences of casadi's Lagrangian gradient (grad f + J^T lam), h = 1e-2
        def gl(xx):
            return sig*np.array(G(xx, [])[1]).ravel() + np.array(Jf(xx, [])[1]).T @ lam
        h = 1e-2; Hfd = np.column_stack([(gl(x+h*e)-gl(x-h*e))/(2*h) for e in np.eye(nx)]); Hfd = (Hfd+Hfd.T)/2
        print(f"    finite differences: |H_ipopt-H_fd|/|H_fd| = {np.abs(Hi-Hfd).max()/np.abs(Hfd).max():.2e}, "
              f"|H_caspar-H_fd|/|H_fd| = {np.abs(Hc-Hfd).max()/np.abs(Hfd).max():.2e}")
        print(f"[{tag}] |H_ipopt-H_caspar|/|H| = {np.abs(Hi-Hc).max()/np.abs(Hi).max():.2e}  "
              f"grad rel {np.abs(gi-gc).max()/np.abs(gi).max():.2e}  jac rel {np.abs(Ji-Jc).max()/np.abs(Ji).max():.2e}")
        print(f"    eig min/max ipopt {ei[0]:.4e} {ei[-1]:.4e}   caspar {ec[0]:.4e} {ec[-1]:.4e}")
    raise Stop
ca.nlpsol = hook
p = "/tmp/casadi_sweep/src/docs/examples/python/dae_single_shooting.py"; os.chdir(os.path.dirname(p))
try: runpy.run_path(p, run_name="__main__")
except Stop: pass
