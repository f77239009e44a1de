"""The general path's QDLDL through the compiled kernels (caspar_backend.compiled.ldl):
the qdldl package's factors' inertia and its solutions bit for bit on random saddle-point
matrices; the zero pivot where QDLDL stops; the solutions against dense linear algebra;
the linear solver taking the kernels only where they are compiled; concurrent solvers of
one structure."""
import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("numba")
qdldl = pytest.importorskip("qdldl")

from caspar_backend.compiled import dispatch  # noqa: E402
from caspar_backend.compiled.ldl import KernelLDL, LDLTables  # noqa: E402
from caspar_backend.linsolve.base import SparseStructure  # noqa: E402
from caspar_backend.linsolve.qdldl import QDLDLSolver  # noqa: E402
from tests.kkt.test_linear_solvers import _saddle  # noqa: E402
from tests.support.threads import results_in_threads  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def kernels():
    dispatch.kernels_ready(wait=True)


def _kkt(seed, nw=40, m=15, shift=0.0):
    rng = np.random.default_rng(seed)
    h = sp.random(nw, nw, 0.08, random_state=rng)
    h = h + h.T + sp.diags(rng.standard_normal(nw) + shift)
    a = sp.random(m, nw, 0.15, random_state=rng) + sp.eye(m, nw)
    k, up = _saddle(h, a)
    # a small negative diagonal on the constraint block (a delta_c): quasi-definite
    # pivots where H's shift makes the first block positive definite
    d = np.asarray(up.indptr[1:]) - 1
    up.data[d[nw:]] -= 1e-8
    k = k - sp.diags(np.r_[np.zeros(nw), np.full(m, 1e-8)])
    return k, up


def _structure(up):
    return SparseStructure(up.shape[0], up.indptr.astype(np.int64),
                           up.indices.astype(np.int64))


@pytest.mark.parametrize("seed", range(6))
def test_factors_and_solves_are_the_packages(seed):
    k, up = _kkt(seed, shift=0.0 if seed % 2 else 5.0)
    ker = KernelLDL(LDLTables(_structure(up)))
    n_pos, n_neg, n_zero = ker.factorize(up.data.copy())
    ref = qdldl.Solver(up, upper=True)
    d = ref.factors()[1]
    assert (n_pos, n_neg, n_zero) == (int((d > 0).sum()), int((d < 0).sum()),
                                       int((d == 0).sum()))
    b = np.random.default_rng(seed + 10).standard_normal(k.shape[0])
    x = ker.solve(b)
    np.testing.assert_array_equal(x, ref.solve(b))
    if seed % 2 == 0:       # quasi-definite: the unpivoted factors are accurate
        np.testing.assert_allclose(k @ x, b, rtol=1e-6, atol=1e-6)
    out = np.empty_like(b)
    assert ker.solve(b, out=out) is out and np.array_equal(out, x)
    strided = np.empty(2 * len(b))[::2]
    ker.solve(b, out=strided)
    np.testing.assert_array_equal(strided, x)


def test_zero_pivot_stops_as_qdldl():
    up = sp.csc_matrix((np.r_[0.0, 1.0, 0.0], [0, 0, 1], [0, 1, 3]), shape=(2, 2))
    ker = KernelLDL(LDLTables(_structure(up)))
    assert ker.factorize(up.data.copy()) == (0, 0, 2)
    with pytest.raises(Exception):
        qdldl.Solver(up, upper=True)


def test_the_linear_solver_takes_the_kernels_where_allowed(monkeypatch):
    k, up = _kkt(3, shift=5.0)
    b = np.arange(k.shape[0], dtype=float)
    answers = []
    for ready in (True, False):
        monkeypatch.setattr(dispatch, "general_path_kernels", lambda r=ready: r)
        s = QDLDLSolver()
        s.analyse(_structure(up))
        assert (s._kernel is not None) == ready
        f = s.factorize(up.data.copy())
        answers.append((f.ok, f.inertia, s.solve(b)))
    (ok1, in1, x1), (ok2, in2, x2) = answers
    assert ok1 and ok2 and in1 == in2
    np.testing.assert_array_equal(x1, x2)


def test_solvers_of_one_structure_in_threads():
    k, up = _kkt(4, shift=5.0)
    tables = LDLTables(_structure(up))
    rng = np.random.default_rng(7)
    cases = [(up.data + 0.1 * j * (np.asarray(up.indices) == np.repeat(
        np.arange(k.shape[0]), np.diff(up.indptr))), rng.standard_normal(k.shape[0]))
        for j in range(8)]
    want = []
    for vals, b in cases:
        ref = qdldl.Solver(sp.csc_matrix((vals, up.indices, up.indptr), shape=up.shape),
                           upper=True)
        want.append(ref.solve(b))
    def work(j):
        ker = KernelLDL(tables)
        for _ in range(100):
            ker.factorize(cases[j][0].copy())
            x = ker.solve(cases[j][1])
        return x

    got = results_in_threads(work, len(cases))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
