import numpy as np
from caspar_backend.linsolve import qdldl as Q
from caspar_backend.linsolve.base import Factorization

_orig_factorize = Q.QDLDLSolver.factorize
_orig_solve = Q.QDLDLSolver.solve

def _row_max(a):
    n = a.shape[0]
    v = np.abs(a.data)
    cmax = np.zeros(n)
    # column maxima (upper triangle CSC: column j entries rows <= j)
    nz = np.diff(a.indptr) > 0
    cm = np.maximum.reduceat(v, a.indptr[:-1][nz]) if v.size else np.zeros(0)
    cmax[nz] = cm
    rmax = np.zeros(n)
    np.maximum.at(rmax, a.indices, v)
    return np.maximum(cmax, rmax)

def factorize(self, values):
    import qdldl
    if self.pivoting:
        self._scale = None
        return _orig_factorize(self, values)
    self._matrix.data[:] = values
    self._diag = self._matrix.data[self._diag_pos]
    self._lu = None
    a = self._matrix
    if not hasattr(self, "_smat") or self._smat is None or self._smat.nnz != a.nnz:
        self._smat = a.copy()
    sm = self._smat
    s = np.ones(a.shape[0])
    cols = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    rows = a.indices
    data = a.data.copy()
    for _ in range(3):
        sm.data[:] = data
        m = _row_max(sm)
        f = np.where(m > 0, 1.0 / np.sqrt(m), 1.0)
        s *= f
        data = data * f[rows] * f[cols]
    sm.data[:] = data
    self._scale = s
    saved = self._matrix
    self._matrix = sm
    try:
        if self._solver is None:
            self._solver, d = self._first_factorization(qdldl)
        else:
            self._solver.update(sm, upper=True)
            d = self._solver.factors()[1]
    except Exception:
        self._solver = None
        self._matrix = saved
        return Factorization(False, 0, 0, self.structure.n)
    self._matrix = saved
    finite = np.isfinite(d)
    n_pos = int(np.count_nonzero(d[finite] > 0)); n_neg = int(np.count_nonzero(d[finite] < 0))
    n_zero = self.structure.n - n_pos - n_neg
    return Factorization(n_zero == 0, n_pos, n_neg, n_zero)

def solve(self, rhs, out=None):
    s = getattr(self, "_scale", None)
    if s is None or self._lu is not None or self.pivoting:
        return _orig_solve(self, rhs, out)
    b = np.ascontiguousarray(rhs, dtype=np.float64) * s
    x = self._solver.solve(b) * s
    if out is None:
        return x
    out[:] = x
    return out

Q.QDLDLSolver.factorize = factorize
Q.QDLDLSolver.solve = solve
