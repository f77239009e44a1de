"""Exact inertia for small systems: the dense symmetric eigendecomposition.

For an ``N x N`` symmetric K given by its upper triangle in CSC (:mod:`.base`),

    K = V diag(lam) V^T        (LAPACK / cuSOLVER ``syevd`` through ``xp.linalg.eigh``),

the inertia is read off the signs of the eigenvalues, an eigenvalue that is exactly zero
counting as zero (the contract of :mod:`.base`, as for the signs of D in LDL^T):

    n_pos = #{lam_i > 0},  n_neg = #{lam_i < 0},  n_zero = N - n_pos - n_neg,

and a solve is ``x = V ((V^T b) / lam)``.  Unlike an LDL^T with a fixed elimination order
it loses no eigenvalue to cancellation, and unlike one with static pivoting it replaces no
tiny pivot: a K = diag(1e-20, 1e3) keeps its 1e-20 (an unbounded LP's delta_w), where a
numerical-rank tolerance (N eps max|lam|) would call it zero and stall delta_w at ~1e-13.
A K that is singular up to rounding then factorizes with eigenvalues of ~eps ||K||; the
caller's iterative refinement against K shows it, as after a pivoting LDL^T.  O(N^3) per
factorization: for small systems only (``N <= DENSE_MAX_N``).

Array-generic: ``xp`` is NumPy or CuPy, the matrix, eigenvectors and right-hand sides
stay in its memory; a factorization reads back the two counts only.  ``eigh`` takes its
workspace from the array module (CuPy's memory pool on the device).
"""

from __future__ import annotations

import numpy as np

from ..arrays import scalars
from .base import Factorization, LinearSolver, SparseStructure

#: largest N for which a solver switches to this dense factorization (an N x N matrix,
#: O(N^3) per factorization)
DENSE_MAX_N = 1000


class DenseEigenSolver(LinearSolver):
    """Final.  ``xp``: the array module of the values and right-hand sides."""

    name = "dense-eigh"

    def __init__(self, xp=np):
        self.xp = xp
        self.structure = None

    def analyse(self, structure: SparseStructure, symbolic=None) -> None:
        xp = self.xp
        n = structure.n
        self.structure = structure
        cols = np.repeat(np.arange(n), np.diff(structure.indptr))
        self._rows = xp.asarray(np.asarray(structure.indices, np.int64))
        self._cols = xp.asarray(cols.astype(np.int64))
        self._a = xp.zeros((n, n))
        self._lam = self._v = None

    def factorize(self, values) -> Factorization:
        xp, n = self.xp, self.structure.n
        if not bool(xp.isfinite(values).all()):
            self._lam = None
            return Factorization(False, 0, 0, n)
        a = self._a
        a.fill(0.0)
        a[self._rows, self._cols] = values      # upper triangle ...
        a[self._cols, self._rows] = values      # ... and its mirror (the diagonal twice)
        try:
            lam, v = xp.linalg.eigh(a)
        except Exception:       # LinAlgError: syevd did not converge
            self._lam = None
            return Factorization(False, 0, 0, n)
        n_pos, n_neg = (int(c) for c in scalars(xp, xp.sum(lam > 0), xp.sum(lam < 0)))
        n_zero = n - n_pos - n_neg
        self._lam, self._v = (lam, v) if n_zero == 0 else (None, None)
        return Factorization(n_zero == 0, n_pos, n_neg, n_zero)

    def solve(self, rhs, out=None):
        v = self._v
        x = v @ ((v.T @ rhs) / self._lam)
        if out is None:
            return x
        out[...] = x
        return out

    def matvec(self, x, out=None):
        y = self._a @ x
        if out is None:
            return y
        out[...] = y
        return out
