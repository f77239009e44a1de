"""The compiled kernels' LDL^T (kernels/qdldl.py: the pattern's schedule from
``elimination_tree`` and ``ldl_schedule``, the numeric ``ldl_factor`` and ``ldl_solve``)
against dense linear algebra on random sparse symmetric quasi-definite matrices with
irregular patterns (elimination trees with many branches): L D L^T reproduces the
matrix, the inertia counts equal the signs of its eigenvalues, and a solve inverts it.
The compiled solves' bit-for-bit equality with QDLDL's C library through the general
path is tests/compiled/test_solve_compiled.py's."""
import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.compiled.kernels import slots
from caspar_backend.compiled.kernels.qdldl import (elimination_tree, ldl_factor,
                                                   ldl_schedule, ldl_solve)
from caspar_backend.compiled.workspace_layout import _pack, _rows_of


def _quasi_definite(n, density, seed):
    """A symmetric matrix with a positive definite leading block (n // 2 rows) and a
    negative definite trailing one, a random sparse pattern off the diagonal: every
    symmetric ordering has an LDL^T with n // 2 positive and n - n // 2 negative
    pivots."""
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=density, random_state=rng, format="csr")
    A = (R + R.T).toarray()
    k = n // 2
    off = np.abs(A).sum(axis=1)
    d = off + 1.0 + rng.random(n)
    np.fill_diagonal(A, np.where(np.arange(n) < k, d, -d))
    return A


def _buffers(U):
    """Workspace buffers holding the upper-triangular CSC ``U`` (as the permuted C) and
    its schedule; the kernels read only these slots."""
    n = U.shape[0]
    Cp, Ci = U.indptr.astype(np.int64), U.indices.astype(np.int64)
    etree, Lnz, work = (np.zeros(n, np.int64) for _ in range(3))
    nnzL = int(elimination_tree(n, Cp, Ci, work, Lnz, etree))
    assert nnzL >= 0
    Lp = np.zeros(n + 1, np.int64)
    Lp[1:] = np.cumsum(Lnz)
    Li, Rc, Rt = (np.zeros(nnzL, np.int64) for _ in range(3))
    Rp = np.zeros(n + 1, np.int64)
    assert ldl_schedule(n, Cp, Ci, etree, Lp, Li, Rp, Rc, Rt,
                        *(np.zeros(n, np.int64) for _ in range(4))) == nnzL
    sizes = np.zeros(len(slots.SIZE_FIELDS), np.int64)
    sizes[slots.SZ_NKKT] = n
    ints = {name: np.zeros(0, np.int64) for name in slots.INT_SLOTS}
    ints.update(SIZES=sizes, C_INDPTR=Cp, C_INDICES=Ci, C_MAP=np.arange(Ci.size),
                PERM=np.arange(n), L_INDPTR=Lp, L_INDICES=Li, LDL_ROW_PTR=Rp,
                LDL_ROW_COL=Rc, LDL_ROW_POS=Rt)
    ints.update(zip(("L_ROW_PTR", "L_ROW_COL", "L_ROW_POS"), _rows_of(Lp, Li, n)))
    floats = {name: np.zeros(0) for name in slots.FLOAT_SLOTS}
    floats.update(C_VALUES=np.zeros(Ci.size), L_VALUES=np.zeros(nnzL), LDL_D=np.zeros(n),
                  LDL_DINV=np.zeros(n), LDL_YVALS=np.zeros(n), LDL_T=np.zeros(n))
    Ib, IO = _pack(ints, slots.INT_SLOTS, np.int64)
    Fb, FO = _pack(floats, slots.FLOAT_SLOTS, np.float64)
    return Fb, FO, Ib, IO, Lp, Li


def _slot(buf, off, k):
    return buf[off[k]:off[k + 1]]


@pytest.mark.parametrize("n, density, seed", [(2, 0.5, 0), (9, 0.3, 1), (40, 0.08, 2),
                                              (120, 0.03, 3), (200, 0.01, 4)])
def test_factor_reproduces_the_matrix_and_its_inertia(n, density, seed):
    A = _quasi_definite(n, density, seed)
    U = sp.csc_matrix(np.triu(A))
    U.sort_indices()
    Fb, FO, Ib, IO, Lp, Li = _buffers(U)
    npos, nneg, nzero = ldl_factor(Fb, FO, Ib, IO, U.data.copy())
    eig = np.linalg.eigvalsh(A)
    assert (npos, nneg, nzero) == (int(np.sum(eig > 0)), int(np.sum(eig < 0)), 0)
    Lx = _slot(Fb, FO, slots.F_L_VALUES)
    D = _slot(Fb, FO, slots.F_LDL_D)
    L = sp.csc_matrix((Lx, Li, Lp), shape=(n, n)).toarray() + np.eye(n)
    np.testing.assert_allclose(L @ np.diag(D) @ L.T, A, rtol=0,
                               atol=1e-11 * np.abs(A).max())
    b = np.random.default_rng(seed).standard_normal(n)
    x = np.zeros(n)
    ldl_solve(Fb, FO, Ib, IO, b, x)
    np.testing.assert_allclose(A @ x, b, rtol=0, atol=1e-10 * (1 + np.abs(b).max()))


def test_a_zero_pivot_is_reported_singular():
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, -2.0]])   # D[1] = 0
    U = sp.csc_matrix(np.triu(A))
    U.sort_indices()
    Fb, FO, Ib, IO, _, _ = _buffers(U)
    assert ldl_factor(Fb, FO, Ib, IO, U.data.copy()) == (0, 0, 3)
