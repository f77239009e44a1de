"""``K x`` for a symmetric K stored as its upper triangle in CSC (linsolve/base.py's
format), for iterative refinement against the factorized matrix.

With U the stored upper triangle (diagonal included) and D its diagonal,
``K = U + U^T - D``.  SciPy's compiled kernels are called on the stored arrays
directly: ``U x`` is ``csc_matvec`` and ``U^T x`` is ``csr_matvec`` of the same
(indptr, indices, data) read as CSR, so no transposed copy is built per call and the
sums run in the order of the operator expression ``(U + U.T - diags(D)) @ x``.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import _sparsetools


class UpperTriangleMatvec:
    """Final.  ``K x`` over one structure's index arrays (``indptr``, ``indices``: the
    CSC upper triangle of an N x N matrix, the integer type SciPy's kernels take), with
    preallocated work vectors (one product at a time: not for concurrent use)."""

    def __init__(self, n: int, indptr, indices):
        self.n, self.indptr, self.indices = n, indptr, indices
        self._up, self._lo, self._dx = np.zeros(n), np.zeros(n), np.zeros(n)

    def __call__(self, data, diag, x, out=None):
        """``(U + U^T - D) x`` for U's values ``data`` (float64, length nnz) and its
        diagonal ``diag`` (float64, length N); a new array when ``out`` is None."""
        n = self.n
        if x.dtype != np.float64 or not x.flags.c_contiguous:
            x = np.ascontiguousarray(x, dtype=np.float64)
        up, lo, dx = self._up, self._lo, self._dx
        up.fill(0.0)
        lo.fill(0.0)
        _sparsetools.csc_matvec(n, n, self.indptr, self.indices, data, x, up)
        _sparsetools.csr_matvec(n, n, self.indptr, self.indices, data, x, lo)
        np.add(up, lo, out=up)
        np.multiply(diag, x, out=dx)
        if out is None:
            return up - dx
        np.subtract(up, dx, out=out)
        return out
