"""Linear solvers of the Levenberg-Marquardt step (Ceres' linear_solver_type).

Each solves the regularized Gauss-Newton system of one iteration,

    (J^T J + D^T D) dx = -J^T r,      D = diag(d),

for J given by its values in a fixed pattern (:class:`~caspar_backend.lsq.jacobian.
SparseJacobian`), r (m,) and d (n,).  ``solve(vals, r, d)`` returns dx (n,) or None when
the factorization fails (not positive definite, non-finite): the minimizer then counts
an invalid step and shrinks the trust region, as Ceres does on LINEAR_SOLVER_FAILURE.

* ``DENSE_QR``: least squares ``min |[J; D] y - [r; 0]|`` by LAPACK (no normal
  equations, best conditioned), dx = -y;
* ``DENSE_NORMAL_CHOLESKY``: dense ``J^T J + D^2`` and LAPACK's Cholesky;
* ``SPARSE_NORMAL_CHOLESKY``: upper CSC ``J^T J + D^2`` (:class:`~caspar_backend.lsq.
  jacobian.NormalPattern`, pattern fixed) factorized by QDLDL (caspar's sparse LDL^T;
  a positive definite matrix has an all-positive D), the analysis done once;
* DENSE_SCHUR / SPARSE_SCHUR: :mod:`caspar_backend.lsq.schur`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from .jacobian import NormalPattern


class StepSolver(ABC):
    """Abstract solver of the LM system; implementations final."""

    name = ""

    def __init__(self, jac):
        self.jac = jac

    @abstractmethod
    def solve(self, vals, r, d):
        """dx (n,) solving ``(J^T J + diag(d)^2) dx = -J^T r``, or None on failure."""


class DenseQR(StepSolver):
    name = "DENSE_QR"

    def solve(self, vals, r, d):
        A = np.vstack([self.jac.csr(vals).toarray(), np.diag(d)])
        rhs = np.r_[r, np.zeros(self.jac.n)]
        y = np.linalg.lstsq(A, rhs, rcond=None)[0]
        return -y if np.all(np.isfinite(y)) else None


class DenseNormalCholesky(StepSolver):
    name = "DENSE_NORMAL_CHOLESKY"

    def __init__(self, jac):
        super().__init__(jac)
        self.normal = NormalPattern(jac.pattern)

    def solve(self, vals, r, d):
        from scipy.linalg import LinAlgError, cho_factor, cho_solve

        A = self.normal.dense(vals, d * d)
        try:
            c = cho_factor(A, lower=False, check_finite=True)
        except (LinAlgError, ValueError):
            return None
        dx = cho_solve(c, -self.jac.rmatvec(vals, r))
        return dx if np.all(np.isfinite(dx)) else None


class SparseNormalCholesky(StepSolver):
    name = "SPARSE_NORMAL_CHOLESKY"

    def __init__(self, jac):
        super().__init__(jac)
        self.normal = NormalPattern(jac.pattern)
        self.ldl = spd_solver(self.normal.n, self.normal.indptr, self.normal.indices)

    def solve(self, vals, r, d):
        return self.ldl(self.normal.values(vals, d * d), -self.jac.rmatvec(vals, r))


def spd_solver(n, indptr, indices):
    """``solve(values, rhs)`` for SPD matrices of one upper CSC pattern: QDLDL (analysis
    once); None when the factorization is not positive definite or not finite."""
    from ..linsolve.base import SparseStructure
    from ..linsolve.qdldl import QDLDLSolver

    solver = QDLDLSolver()
    solver.analyse(SparseStructure(n, indptr, indices))

    def solve(values, rhs):
        fac = solver.factorize(values)
        if not fac.ok or fac.n_pos != n:
            return None
        x = solver.solve(rhs)
        return x if np.all(np.isfinite(x)) else None

    return solve


def dense_spd_solve(A, rhs):
    """Cholesky solve of a dense SPD ``A`` (upper triangle read); None on failure."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve

    try:
        c = cho_factor(A, lower=False, check_finite=True)
    except (LinAlgError, ValueError):
        return None
    x = cho_solve(c, rhs)
    return x if np.all(np.isfinite(x)) else None


NORMAL_SOLVERS = {c.name: c for c in (DenseQR, DenseNormalCholesky, SparseNormalCholesky)}
