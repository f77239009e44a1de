"""Record every QDLDL factorization of a solve (general path) and compare its inertia with
the dense eigenvalues of the matrix it factorized (the factorized values, static term
included)."""
import sys, runpy, numpy as np
import caspar_backend.linsolve.qdldl as Q
orig = Q.QDLDLSolver.factorize
rows = []
def fact(self, values):
    f = orig(self, values)
    st = self.structure
    n = st.n
    A = np.zeros((n, n))
    cols = np.repeat(np.arange(n), np.diff(st.indptr))
    A[np.asarray(st.indices), cols] = np.asarray(values)
    A = A + np.triu(A, 1).T
    ev = np.linalg.eigvalsh(A)
    tol = 1e-12 * max(1.0, np.abs(ev).max())
    true = (int((ev > tol).sum()), int((ev < -tol).sum()), int((np.abs(ev) <= tol).sum()))
    near = np.sort(np.abs(ev))[:3]
    rows.append((f.inertia, true, near))
    return f
Q.QDLDLSolver.factorize = fact
import caspar_backend.casadi as cc
orig_nlpsol = cc.nlpsol
def nlpsol(name, solver, nlp, opts=None):
    opts = dict(opts or {})
    c = dict(opts.get("caspar", {}))
    for k in list(opts):
        if k.startswith("caspar."):
            c[k[7:]] = opts.pop(k)
    c["compiled_path"] = "no"
    opts["caspar"] = c
    return orig_nlpsol(name, solver, nlp, opts)
cc.nlpsol = nlpsol
sys.argv = [sys.argv[1]]
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
except SystemExit:
    pass
bad = 0
for k, (got, true, near) in enumerate(rows):
    flag = "" if got[:2] == true[:2] else "  <-- differs"
    bad += bool(flag)
    if flag or k < 12:
        print(k, "qdldl", got, "dense", true, "smallest |eig|", near, flag)
print(len(rows), "factorizations,", bad, "with an inertia other than the dense eigenvalues'")
