"""Limited-memory BFGS approximation of the Lagrangian Hessian in compact form.

With the last ``k`` pairs ``S = [s_i]``, ``Y = [y_i]`` (``nx x k``) and
``B0 = sigma I`` (``sigma = s^T y / s^T s`` of the newest pair, clipped to [1e-8, 1e8];
``1`` before any pair), Byrd, Nocedal & Schnabel's compact form is

    B = sigma I - [sigma S, Y] M^{-1} [sigma S, Y]^T,
    M = [[sigma S^T S, L], [L^T, -D]],

``L`` the strictly lower part of ``S^T Y`` and ``D`` its diagonal.  As IPOPT, through the
Cholesky factor of M's Schur complement (:meth:`LBFGS.lowrank`; stable where M is
nearly singular, as late in a solve), ``B = sigma I - U U^T + V V^T``; where that
Cholesky fails, ``-M^{-1} = E diag(lam) E^T`` gives ``Q = [sigma S, Y] E |lam|^{1/2}``,
``C = diag(sign(lam))``.  Either way

    B = sigma I + Q C Q^T,

which is what :class:`~caspar_backend.kkt.augmented.AugmentedKKT` takes as its low-rank
block (unused columns: ``Q = 0``, ``C = -1``).  The Hessian values are the diagonal
``sigma`` on the x-block, written into the KKT system's Hessian buffer through
:meth:`fill_kkt`, which therefore needs a structural diagonal: the interior-point method
adds ``sigma`` through ``Sigma`` instead (the KKT Hessian values are set to zero).

Pairs with ``s^T y <= sqrt(eps) ||s|| ||y||`` are skipped (IPOPT's default ``bfgs``
update); at the iteration after ``max_skipping`` consecutive skips the memory is reset
and that iteration's pair dropped (IPOPT's "Resetting Limited-Memory Update").

Arrays: ``S``, ``Y`` and ``Q`` live in the array module ``xp``; the small ``2k x 2k``
matrices (``S^T S``, ``S^T Y``, ``M`` and its eigen-decomposition) are formed on the
device and decomposed on the host, ``c`` is a host array.
"""

from __future__ import annotations

import numpy as np

from ..arrays import host, scalars


class LBFGS:
    """Final."""

    def __init__(self, nx, max_history, max_skipping=2, xp=np):
        self.nx, self.k, self.xp = nx, max_history, xp
        self.S = xp.zeros((nx, 0))
        self.Y = xp.zeros((nx, 0))
        self.sigma = 1.0
        self.skipped = 0
        self.max_skipping = max_skipping

    def update(self, s, y):
        """Take the pair ``(s, y)`` of an iteration (IPOPT's UpdateHessian): after
        ``max_skipping`` skipped pairs in a row the memory is reset instead, and this
        pair is not used (the approximation restarts from the current point)."""
        xp = self.xp
        if self.skipped >= self.max_skipping:
            self.S = xp.zeros((self.nx, 0))
            self.Y = xp.zeros((self.nx, 0))
            self.sigma = 1.0
            self.skipped = 0
            return
        sy, ns, ny, ss = scalars(xp, s @ y, xp.linalg.norm(s), xp.linalg.norm(y), s @ s)
        if not np.isfinite(sy) or sy <= np.sqrt(np.finfo(float).eps) * ns * ny:
            self.skipped += 1
            return
        self.skipped = 0
        if self.k:       # (no history: B = sigma I, sigma from the newest pair, as IPOPT)
            self.S = xp.column_stack([self.S, s])[:, -self.k:]
            self.Y = xp.column_stack([self.Y, y])[:, -self.k:]
        self.sigma = float(np.clip(sy / ss, 1e-8, 1e8))

    def lowrank(self):
        """(Q, c): B = sigma I + Q diag(c) Q^T, as IPOPT forms it: with the Cholesky
        factor J of ``sigma S^T S + L D^{-1} L^T`` (the Schur complement of ``-D`` in M,
        positive definite as D is: skipped pairs keep ``s^T y > 0``),

            B = sigma I - U U^T + V V^T,  U = (sigma S + Y D^{-1} L^T) J^{-T},
            V = Y D^{-1/2};

        the eigen-decomposition of ``-M^{-1}`` (module doc) where that Cholesky fails."""
        xp = self.xp
        S, Y, sig = self.S, self.Y, self.sigma
        p = S.shape[1]
        if p == 0:
            return xp.zeros((self.nx, 0)), np.zeros(0)
        SY = host(S.T @ Y)
        StS = host(sig * S.T @ S)
        L = np.tril(SY, -1)
        d = np.diag(SY).copy()
        try:
            J = np.linalg.cholesky(StS + (L / d) @ L.T)
        except np.linalg.LinAlgError:
            J = None
        if J is not None and np.all(d > 0):
            Jinv_T = np.linalg.inv(J).T
            U = (sig * S + Y @ xp.asarray((L / d).T)) @ xp.asarray(Jinv_T)
            V = Y / xp.asarray(np.sqrt(d))
            return xp.hstack([U, V]), np.concatenate([-np.ones(p), np.ones(p)])
        D = np.diag(d)
        M = np.block([[StS, L], [L.T, -D]])
        lam, E = np.linalg.eigh(-np.linalg.inv(M))
        W = xp.hstack([sig * S, Y]) @ xp.asarray(E)
        return W * xp.asarray(np.sqrt(np.abs(lam))), np.sign(lam)

    def fill_kkt(self, kkt, nw):
        """Write sigma (added to Sigma's diagonal on the x-block) and the low-rank block."""
        kkt.hess_values[:] = 0.0
        kkt.sigma[:self.nx] += self.sigma
        Q, c = self.lowrank()
        r = Q.shape[1]
        kkt.lowrank_Q[:] = 0.0
        kkt.lowrank_c[:] = -1.0
        kkt.lowrank_Q[:self.nx, :r] = Q
        kkt.lowrank_c[:r] = np.where(c == 0, -1.0, c)
