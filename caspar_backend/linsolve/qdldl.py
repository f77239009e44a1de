"""LDL^T with inertia through the PyPI ``qdldl`` package (QDLDL, OSQP's factorization).

QDLDL factors ``P K P^T = (I + L) D (I + L)^T`` with an AMD ordering ``P`` and a
**diagonal** D, without pivoting: the ordering and the elimination tree are computed once
(:meth:`analyse`), later matrices with the same pattern are refactorized numerically
(``Solver.update``).  Because D is diagonal, Sylvester's law gives the exact inertia from
the signs of D.  Without pivoting a zero (or tiny) pivot can occur on a nonsingular
indefinite matrix; QDLDL then stops and leaves the remaining pivots at zero, which we
report as ``n_zero > 0``.  The interior-point method reacts as for a singular matrix, by
adding the dual regularization ``-delta_c I`` (and, if needed, ``delta_w I``), which makes
the augmented system quasi-definite and always factorizable without pivoting.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .base import Factorization, LinearSolver, SparseStructure


class QDLDLSolver(LinearSolver):
    """Final."""

    name = "qdldl"

    def __init__(self):
        self.structure = None
        self._solver = None
        self._matrix = None

    def analyse(self, structure: SparseStructure) -> None:
        self.structure = structure
        counts = np.diff(structure.indptr)
        self._col_of_entry = np.repeat(np.arange(structure.n), counts)
        self._matrix = sp.csc_matrix(
            (np.zeros(structure.nnz), structure.indices.astype(np.int32),
             structure.indptr.astype(np.int32)), shape=(structure.n, structure.n))
        self._solver = None   # the qdldl object needs values: created at first factorize

    def factorize(self, values) -> Factorization:
        import qdldl

        # data is replaced in place; the pattern (and qdldl's analysis) stays
        self._matrix.data[:] = values
        try:
            if self._solver is None:
                self._solver = qdldl.Solver(self._matrix, upper=True)
            else:
                self._solver.update(self._matrix, upper=True)
        except Exception:           # qdldl raises on some zero pivots
            self._solver = None
            return Factorization(False, 0, 0, self.structure.n)
        d = self._solver.factors()[1]
        finite = np.isfinite(d)
        n_pos = int(np.count_nonzero(d[finite] > 0))
        n_neg = int(np.count_nonzero(d[finite] < 0))
        n_zero = self.structure.n - n_pos - n_neg
        return Factorization(n_zero == 0, n_pos, n_neg, n_zero)

    def solve(self, rhs, out=None):
        x = self._solver.solve(np.ascontiguousarray(rhs, dtype=np.float64))
        if out is None:
            return x
        out[:] = x
        return out

    def matvec(self, x, out=None):
        a = self._matrix
        y = a @ x + a.T @ x - a.diagonal() * x
        if out is None:
            return y
        out[:] = y
        return out
