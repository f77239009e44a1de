"""Development stand-in for :class:`.ldl.BatchLDL`: dense eigen-decompositions.

Same interface as BatchLDL (``factorize(values, active) -> (n_pos, n_neg, n_zero)``,
``solve``, ``matvec``); the inertia comes from ``eigvalsh`` of each dense K_b and the
solves from ``numpy.linalg.solve``.  O(B N^3): for tests of small systems only.
"""

from __future__ import annotations

import numpy as np


class DenseBatchLDL:
    """Final."""

    def __init__(self, structure, batch_size: int, xp=np):
        self.xp, self.n, self.nnz, self.batch_size = xp, structure.n, structure.nnz, batch_size
        counts = np.diff(structure.indptr)
        self._col = np.repeat(np.arange(structure.n), counts)
        self._row = np.asarray(structure.indices, np.int64)
        self._K = np.zeros((batch_size, self.n, self.n))
        self._inertia = tuple(np.zeros(batch_size, np.int64) for _ in range(3))

    def _dense(self, values):
        B = values.shape[0]
        K = np.zeros((B, self.n, self.n))
        K[:, self._row, self._col] = values
        K[:, self._col, self._row] = values
        return K

    def factorize(self, values, active=None):
        values = np.asarray(values)
        idx = np.arange(self.batch_size) if active is None else np.asarray(active)
        K = self._dense(values[idx])
        self._K[idx] = K
        with np.errstate(all="ignore"):
            ok = np.all(np.isfinite(K), axis=(1, 2))
            ev = np.zeros((len(idx), self.n))
            if ok.any():
                ev[ok] = np.linalg.eigvalsh(K[ok])
        scale = np.maximum(np.max(np.abs(ev), axis=1, keepdims=True), 1e-300)
        zero = (np.abs(ev) <= 1e-15 * scale) | ~ok[:, None]
        n_pos, n_neg, n_zero = self._inertia
        n_pos[idx] = np.count_nonzero((ev > 0) & ~zero, axis=1)
        n_neg[idx] = np.count_nonzero((ev < 0) & ~zero, axis=1)
        n_zero[idx] = np.count_nonzero(zero, axis=1)
        return n_pos.copy(), n_neg.copy(), n_zero.copy()

    def solve(self, rhs, out=None):
        with np.errstate(all="ignore"):
            try:
                x = np.linalg.solve(self._K, rhs[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                x = np.stack([_safe_solve(k, r) for k, r in zip(self._K, rhs)])
        if out is None:
            return x
        out[...] = x
        return out

    def matvec(self, values, x, out=None):
        y = np.einsum("bij,bj->bi", self._dense(np.asarray(values)), x)
        if out is None:
            return y
        out[...] = y
        return out


def _safe_solve(k, r):
    try:
        return np.linalg.solve(k, r)
    except np.linalg.LinAlgError:
        return np.full_like(r, np.nan)
