"""ITERATIVE_SCHUR: the reduced camera system solved by preconditioned conjugate
gradients without forming it (Ceres' ITERATIVE_SCHUR with SCHUR_JACOBI).

With the split of :mod:`caspar_backend.lsq.schur` (E, F block-sparse, V block diagonal),
the reduced matrix is applied as

    S v = F^T (F v - E V^{-1} E^T F v) + D_f^2 v

(four block-sparse products and one batched s_e x s_e product, O(nnz(J)) per
application), and preconditioned by its block diagonal (Ceres' SCHUR_JACOBI):

    M_i = (F^T F)_ii + D_i^2 - sum_b W_ib V_b^{-1} W_ib^T,

inverted in one batch.  CG stops as Ceres' ``ConjugateGradientsSolver`` does under
Levenberg-Marquardt: on the quadratic model ``Q(x) = x^T S x - 2 b^T x``, when
``i (Q_i - Q_{i-1}) / Q_i < eta`` (Nash & Sofer's truncated Newton rule; options
``eta``, ``min_linear_solver_iterations``, ``max_linear_solver_iterations``), so steps
are inexact by design and the trust region absorbs it.  The points follow by back
substitution as in the direct solve.
"""

from __future__ import annotations

import numpy as np

from .linear_solvers import StepSolver
from .schur import SchurComplementSolver


class IterativeSchurSolver(StepSolver):
    """ITERATIVE_SCHUR (final).  See the module docstring."""

    name = "ITERATIVE_SCHUR"

    def __init__(self, jac, structure, eta=0.1, min_iterations=0, max_iterations=500):
        super().__init__(jac)
        # the index maps of the block split (its dense path builds no reduced pattern)
        self.split = SchurComplementSolver(jac, structure, dense=True)
        self.structure = structure
        self.eta, self.min_it, self.max_it = float(eta), int(min_iterations), int(max_iterations)
        self.last_iterations = 0

    def solve(self, vals, r, d):
        sp_ = self.split
        st = self.structure
        s_e, s_f, n_eb, n_fb = sp_.s_e, sp_.s_f, sp_.n_eb, sp_.n_fb
        blocks = sp_.eliminated_blocks(vals, d)
        if blocks is None:
            return None
        E, F, Et, Ft, Vinv = blocks
        df = np.ones(sp_.N)
        df[sp_.f_diag] = (d * d)[st.f_cols[sp_.f_valid]]

        def vinv(y):
            return np.einsum("bij,bj->bi", Vinv, y.reshape(n_eb, s_e)).reshape(-1)

        def apply_s(v):
            fv = F @ v
            return Ft @ (fv - E @ vinv(Et @ fv)) + df * v

        # ---- SCHUR_JACOBI: block diagonal of S
        Wt = (Et @ F).tobsr(blocksize=(s_e, s_f))
        rows_wt = np.repeat(np.arange(n_eb), np.diff(Wt.indptr))
        Tt = np.matmul(Vinv[rows_wt], Wt.data)                         # (P, s_e, s_f)
        contrib = np.matmul(Wt.data.transpose(0, 2, 1), Tt)            # (P, s_f, s_f)
        M = np.zeros((n_fb, s_f * s_f))
        if len(contrib):
            np.add.at(M, Wt.indices, -contrib.reshape(-1, s_f * s_f))
        FtF = (Ft @ F).tobsr(blocksize=(s_f, s_f))
        bi, bj = sp_._block_coords(FtF)
        on = bi == bj
        M[bi[on]] += FtF.data[on].reshape(-1, s_f * s_f)
        M = M.reshape(n_fb, s_f, s_f) + df.reshape(n_fb, s_f)[:, :, None] * np.eye(s_f)
        try:
            np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            return None
        Minv = np.linalg.inv(M)

        def precond(v):
            return np.einsum("bij,bj->bi", Minv, v.reshape(n_fb, s_f)).reshape(-1)

        # ---- right-hand side, then PCG from 0
        g_e = Et @ r
        b = -(Ft @ r) + Ft @ (E @ vinv(g_e))
        b[sp_.pad_f] = 0.0
        x, self.last_iterations = truncated_pcg(np, apply_s, precond, b, self.eta, self.min_it,
                                                self.max_it)
        if not np.all(np.isfinite(x)):
            return None
        # ---- back substitution
        dxe = -vinv(g_e + Et @ (F @ x)).reshape(n_eb, s_e)
        dx = np.zeros(self.jac.n)
        dx[st.f_cols[sp_.f_valid]] = x.reshape(n_fb, s_f)[sp_.f_valid]
        dx[st.e_cols[sp_.e_valid]] = dxe[sp_.e_valid]
        return dx if np.all(np.isfinite(dx)) else None


def truncated_pcg(xp, apply_s, precond, b, eta, min_it, max_it):
    """``(x, iterations)``: preconditioned CG on ``S x = b`` from 0 (``apply_s``:
    v -> S v, ``precond``: v -> M^{-1} v, on ``xp`` arrays), stopped as Ceres'
    ``ConjugateGradientsSolver`` under Levenberg-Marquardt: after iteration i when
    ``i (Q_i - Q_{i-1}) / Q_i < eta`` with ``Q(x) = x^T S x - 2 b^T x``
    (= -x^T (b + r), r = b - S x), once i >= ``min_it``; at most ``max_it``
    iterations, or when the curvature p^T S p is not positive.  Two host reads per
    iteration (the step length; the model value with the next r^T z)."""
    x = xp.zeros(b.size)
    res = b.copy()
    z = precond(res)
    p = z.copy()
    rz = float(res @ z)
    q0, it = 0.0, 0
    while it < max_it and rz > 0:
        sp = apply_s(p)
        alpha = rz / float(p @ sp)
        if not np.isfinite(alpha) or alpha <= 0:
            break
        x += alpha * p
        res -= alpha * sp
        it += 1
        z = precond(res)
        q1, rz_new = _read(xp, -(x @ (b + res)), res @ z)
        if it >= min_it and q1 != 0 and it * (q1 - q0) / q1 < eta:
            break
        q0 = q1
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, it


def _read(xp, *zero_d):
    """0-d arrays as Python floats, read back in one transfer."""
    if xp is np:
        return [float(v) for v in zero_d]
    return xp.stack([xp.asarray(v, dtype=xp.float64) for v in zero_d]).get().tolist()
