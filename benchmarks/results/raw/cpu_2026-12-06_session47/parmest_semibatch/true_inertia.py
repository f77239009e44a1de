"""Exact-ish inertia of the dumped K (iteration 1, delta_w = 0) by dense Bunch-Kaufman
(scipy.linalg.ldl) and by eigenvalues, with and without the static term; QDLDL's D."""
import numpy as np, scipy.sparse as sp, scipy.linalg as sl
K = sp.load_npz("/tmp/helperA_K1.npz").toarray(); n = K.shape[0]
nw, m, eps = 890, 886, 1e-9
D = np.load("/tmp/helperA_K1_D.npy")
print("N", n, "QDLDL D: pos", (D > 0).sum(), "neg", (D < 0).sum(), "min|D|", np.abs(D).min(), "max|D|", np.abs(D).max())
K0 = K.copy(); K0[np.arange(nw), np.arange(nw)] -= eps; K0[np.arange(nw, n), np.arange(nw, n)] += eps
for name, M in (("K+static", K), ("K", K0)):
    lu, d, perm = sl.ldl(M, lower=True)
    ev = np.linalg.eigvalsh(d)
    w = np.linalg.eigvalsh(M)
    print(f"{name}: BK inertia ({(ev>0).sum()},{(ev<0).sum()},{(ev==0).sum()})  eig inertia ({(w>0).sum()},{(w<0).sum()})"
          f"  |eig| min {np.abs(w).min():.3e} max {np.abs(w).max():.3e}; smallest |eig|: {np.sort(np.abs(w))[:6]}")
A = K0[nw:, :nw]; H = K0[:nw, :nw]
s = np.linalg.svd(A, compute_uv=False)
print(f"Jacobian A ({m}x{nw}): sigma max {s[0]:.3e} min {s[-1]:.3e}, smallest {s[-4:]}")
print(f"diag(W+Sigma) min {np.diag(H).min():.3e} max {np.diag(H).max():.3e}; zeros {(np.diag(H)==0).sum()}")
# reduced Hessian on null(A)
_, _, Vt = np.linalg.svd(A); Z = Vt[m:].T
print("reduced Hessian eig:", np.linalg.eigvalsh(Z.T @ H @ Z))
