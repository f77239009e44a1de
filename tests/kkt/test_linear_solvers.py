"""The linear solvers under the augmented KKT system: inertia and solves against dense
linear algebra, and the accurate (pivoted) factorization used when refinement stagnates."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.kkt import AugmentedKKT
from caspar_backend.linsolve import make_linear_solver
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.qdldl import QDLDLSolver

pytest.importorskip("qdldl")


def _kkt(rng, nw, m, r, dup=True):
    H = rng.standard_normal((nw, nw))
    H = H + H.T
    hr, hc = np.tril_indices(nw)
    A = rng.standard_normal((m, nw)) * (rng.random((m, nw)) < 0.6)
    A[np.arange(m), np.arange(m) % nw] += 1.0
    jr, jc = np.nonzero(A)
    k = AugmentedKKT(nw, m, np.r_[hr, hr] if dup else hr, np.r_[hc, hc] if dup else hc,
                     jr, jc, make_linear_solver("qdldl"), n_lowrank=r)
    vals = H[hr, hc]
    k.hess_values[:] = np.r_[vals / 2, vals / 2] if dup else vals
    k.jac_values[:] = A[jr, jc]
    k.sigma[:] = rng.random(nw)
    Q = rng.standard_normal((nw, r))
    c = rng.choice([-1.0, 1.0], r)
    if r:
        k.lowrank_Q[:] = Q
        k.lowrank_c[:] = c
    return k, H, A, Q, c


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("r", [0, 3])
def test_inertia_and_solve_match_dense(seed, r):
    rng = np.random.default_rng(seed)
    nw, m = 9, 4
    k, H, A, Q, c = _kkt(rng, nw, m, r)
    k.delta_w, k.delta_c = 0.3, 1e-4
    k.build()
    fact, ok = k.factorize()
    top = H + np.diag(k.sigma + 0.3) + (Q * c) @ Q.T
    K = np.block([[top, A.T], [A, -1e-4 * np.eye(m)]])
    ev = np.linalg.eigvalsh(K)
    assert ok == (((ev > 0).sum(), (ev < 0).sum()) == (nw, m))
    if fact.ok:
        # Haynsworth: inertia of the factorized (bordered) matrix = In(K) + In(-C)
        assert fact.n_pos == (ev > 0).sum() + (c < 0).sum()
        assert fact.n_neg == (ev < 0).sum() + (c > 0).sum()
        bw, bc = rng.standard_normal(nw), rng.standard_normal(m)
        dw, dy = k.solve(bw, bc)
        np.testing.assert_allclose(K @ np.r_[dw, dy], np.r_[bw, bc], atol=1e-8)


def test_singular_matrix_reports_zero_pivot():
    solver = make_linear_solver("qdldl")
    from caspar_backend.linsolve import SparseStructure

    # [[1, 1], [1, 1]] upper triangle CSC
    s = SparseStructure(2, np.array([0, 1, 3]), np.array([0, 0, 1]))
    solver.analyse(s)
    f = solver.factorize(np.array([1.0, 1.0, 1.0]))
    assert not f.ok and f.n_zero >= 1
    f = solver.factorize(np.array([1.0, 2.0, 1.0]))
    assert f.ok and f.inertia == (1, 1, 0)


# ======================================================================================
# Refinement that no static term rescues: an accurate pivoted factorization of K.
#
# Pyomo's ``examples/performance/jump/lqcp.py`` (Crank-Nicolson boundary control of the
# heat equation, a convex QP) at n = 100: 10,302 variables, most with a zero Hessian
# diagonal and no active bound, and PDE rows with coefficients ~1/h^2.  qdldl's factors
# without pivoting grew without bound: refinement against K stagnated (contraction ~1) at
# every static term up to its maximum 1e-6, the primal infeasibility stayed at 1.5e-7 for
# 100 iterations and the solve ended "Solved To Acceptable Level" 2.6e-3 from IPOPT's
# objective.  When the static terms are exhausted, that iteration's solves now go through
# SuperLU's LU of K itself (qdldl still gives the inertia): "Optimal Solution Found", and
# IPOPT's objective at tol 1e-10 to 5e-8.

def _saddle_upper(n, m, seed=0):
    """Upper triangle (CSC) of [[H, A^T], [A, 0]] with A = [I + R1, R2] (R sparse
    random) and H = diag(0, I): H is positive definite on A's null space, so K is
    nonsingular, indefinite, with m zero diagonal entries in H that an unpivoted
    elimination in a fill-reducing order meets as zero pivots."""
    h = sp.diags(np.r_[np.zeros(m), np.ones(n - m)])
    r = sp.random(m, n, density=2.0 / n, random_state=seed + 1, format="csr")
    a = (sp.hstack([sp.eye(m), sp.csr_matrix((m, n - m))]) + 0.3 * r).tocsr()
    return _saddle(h, a)


def _saddle(h, a):
    """``(K, U)``: K = [[H, A^T], [A, 0]] (CSC) and its upper triangle U in the linear
    solvers' format (CSC, sorted, every diagonal entry stored, zeros included)."""
    m = a.shape[0]
    k = sp.bmat([[h, a.T], [a, sp.csr_matrix((m, m))]]).tocsc()
    t = sp.triu(k, format="coo")
    d = np.arange(k.shape[0])
    # coo -> csc keeps the explicit zeros
    up = sp.csc_matrix((np.r_[t.data, np.zeros(k.shape[0])],
                        (np.r_[t.row, d], np.r_[t.col, d])), shape=k.shape)
    up.sort_indices()
    return k, up


def _with_diagonal(up, e):
    """Values of ``up + diag(e)`` in ``up``'s pattern."""
    v = up.data.copy()
    for j in range(up.shape[0]):
        lo, hi = up.indptr[j], up.indptr[j + 1]
        v[lo + np.searchsorted(up.indices[lo:hi], j)] += e[j]
    return v


def _accurate_solver(up):
    s = QDLDLSolver()
    s.analyse(SparseStructure(up.shape[0], up.indptr.astype(np.int64),
                              up.indices.astype(np.int64)))
    return s


def test_accurate_factorization_solves_k_itself_until_the_next_factorize():
    """qdldl factorizes K + E (E a static term on the diagonal); factorize_accurate(E)
    solves K itself by SciPy's pivoted LU, and only until the next factorize."""
    k, up = _saddle_upper(900, 700)
    n = k.shape[0]
    e = np.r_[np.full(900, 1e-6), np.full(700, -1e-6)]
    s = _accurate_solver(up)
    values = _with_diagonal(up, e)
    f = s.factorize(values)
    assert f.ok and f.inertia == (900, 700, 0)
    b = np.random.default_rng(3).standard_normal(n)
    x_reg = s.solve(b)
    assert s.factorize_accurate(e)
    x = s.solve(b)
    # the solve of K, against SciPy's own sparse solve; not the regularized matrix's
    np.testing.assert_allclose(x, sp.linalg.spsolve(k.tocsc(), b), rtol=1e-8, atol=1e-10)
    assert np.abs(k @ x - b).max() <= 1e-10 * (1 + np.abs(b).max())
    assert np.abs(k @ x_reg - b).max() > 1e3 * np.abs(k @ x - b).max()
    # the matvec (refinement's residual) is still the factorized matrix's
    np.testing.assert_allclose(s.matvec(x), (k + sp.diags(e)) @ x, rtol=1e-12, atol=1e-12)
    s.factorize(values)
    np.testing.assert_array_equal(s.solve(b), x_reg)


def test_accurate_factorization_of_a_singular_matrix_fails():
    _, up = _saddle_upper(900, 700)
    s = _accurate_solver(up)
    assert not s.factorize_accurate(np.zeros(up.shape[0]))   # the zero matrix
    # the last constraint row of A made zero (its CSC column): K singular
    z = up.copy()
    z.data[z.indptr[-2]:z.indptr[-1]] = 0.0
    s.factorize(z.data)
    assert not s.factorize_accurate(np.zeros(up.shape[0]))


def _lqcp(n):
    """Pyomo's examples/performance/jump/lqcp.py with n = m (as written there)."""
    pyo = pytest.importorskip("pyomo.environ")
    mdl = pyo.ConcreteModel()
    dx, T, a = 1.0 / n, 1.58, 0.001
    dt, h2 = T / n, dx ** 2
    mdl.y = pyo.Var(range(n + 1), range(n + 1), bounds=(0.0, 1.0))
    mdl.u = pyo.Var(range(n + 1), bounds=(-1.0, 1.0))

    def yt(j):
        return 0.5 * (1 - (j * dx) ** 2)

    y, u = mdl.y, mdl.u
    mdl.obj = pyo.Objective(expr=0.25 * dx * (
        (y[n, 0] - yt(0)) ** 2 + 2 * sum((y[n, j] - yt(j)) ** 2 for j in range(1, n))
        + (y[n, n] - yt(n)) ** 2) + 0.25 * a * dt * (
        2 * sum(u[i] ** 2 for i in range(1, n)) + u[n] ** 2))
    mdl.pde = pyo.Constraint(range(n), range(1, n), rule=lambda m, i, j: (
        (y[i + 1, j] - y[i, j]) / dt == 0.5 * (
            y[i, j - 1] - 2 * y[i, j] + y[i, j + 1] + y[i + 1, j - 1]
            - 2 * y[i + 1, j] + y[i + 1, j + 1]) / h2))
    mdl.ic = pyo.Constraint(range(n + 1), rule=lambda m, j: y[0, j] == 0)
    mdl.bc1 = pyo.Constraint(range(1, n + 1), rule=lambda m, i: (
        y[i, 2] - 4 * y[i, 1] + 3 * y[i, 0] == 0))
    mdl.bc2 = pyo.Constraint(range(1, n + 1), rule=lambda m, i: (
        y[i, n - 2] - 4 * y[i, n - 1] + 3 * y[i, n] == (2 * dx) * (u[i] - y[i, n])))
    return mdl


@pytest.mark.parametrize("mkl", [True, False])
def test_lqcp_100_as_ipopt(monkeypatch, mkl):
    """Refinement failing with every static term: with MKL the switch to the pivoting
    mode (PARDISO) for the rest of the solve; without, SuperLU's LU of K for that
    iteration's solves.  Either way IPOPT's objective and "Optimal Solution Found"."""
    pyo = pytest.importorskip("pyomo.environ")
    from tests.support.pyomo_ipopt_reference import objective_value, solve_reference

    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))
    from caspar_backend.linsolve import pardiso_mkl

    if mkl and not pardiso_mkl.pardiso_available():
        pytest.skip("Intel MKL not installed (the 'mkl' extra)")
    if not mkl:
        monkeypatch.setattr(pardiso_mkl, "pardiso_available", lambda: False)
    used, switched = [], []
    accurate, pivoting = QDLDLSolver.factorize_accurate, QDLDLSolver.enable_pivoting

    def recording(self, diag_shift):
        ok = accurate(self, diag_shift)
        used.append(ok)
        return ok

    def recording_switch(self):
        ok = pivoting(self)
        switched.append(ok and self._sparse_pivoting is not None)
        return ok

    monkeypatch.setattr(QDLDLSolver, "factorize_accurate", recording)
    monkeypatch.setattr(QDLDLSolver, "enable_pivoting", recording_switch)
    # tol 1e-10: the objective moves ~1e-4 relative between mu = 2.5e-9 and 1e-10
    # (10^4 bounds near activity), so at 1e-8 where each solver stops decides the digits
    opts = {"tol": 1e-10}
    ref = solve_reference(_lqcp(100), opts)
    mdl = _lqcp(100)
    res = pyo.SolverFactory("caspar").solve(mdl, options=opts)
    assert any(switched) == mkl and any(used) == (not mkl)
    assert res.solver.termination_condition == pyo.TerminationCondition.optimal
    # IPOPT's "Optimal Solution Found", not "Solved To Acceptable Level" (also 'optimal')
    assert "Optimal Solution Found" in str(res.solver.message)
    f = objective_value(mdl)
    assert abs(f - ref.objective) <= 1e-6 * abs(ref.objective), (f, ref.objective)
    it = res.solver.statistics.black_box.number_of_iterations
    assert it <= 2 * ref.iterations + 10, (it, ref.iterations)


def test_bunch_kaufman_inertia_matches_the_eigenvalues():
    """The dense factorization's inertia from dsytrf's 1x1 and 2x2 blocks (runs of 2x2
    blocks included: a zero diagonal forces them) equals the eigenvalues' signs."""
    from scipy.linalg import lapack

    from caspar_backend.linsolve.qdldl import _bunch_kaufman_inertia

    rng = np.random.default_rng(5)
    for t in range(120):
        n = int(rng.integers(1, 30))
        a = rng.standard_normal((n, n))
        a = a + a.T
        if t % 2:
            np.fill_diagonal(a, 0.0)
        ldu, ipiv, _ = lapack.dsytrf(a, lower=1)
        ev = np.linalg.eigvalsh(a)
        assert _bunch_kaufman_inertia(ldu, ipiv) == (int((ev > 0).sum()),
                                                     int((ev < 0).sum())), t


def test_dense_kkt_is_factorized_densely_from_the_start():
    """A K of at least DENSE_KKT_MIN_N rows with a dense upper triangle goes to LAPACK's
    Bunch-Kaufman from its first factorization: the same inertia and solution as dense
    linear algebra; a sparse one of the same size stays with QDLDL."""
    from caspar_backend.linsolve.qdldl import DENSE_KKT_MIN_N, dense_kkt

    rng = np.random.default_rng(2)
    n = DENSE_KKT_MIN_N
    a = rng.standard_normal((n, n))
    a = a + a.T
    u = sp.csc_matrix(np.triu(a))
    s = QDLDLSolver()
    s.analyse(SparseStructure(n, u.indptr.astype(np.int64), u.indices.astype(np.int64)))
    assert s.pivoting and dense_kkt(n, u.nnz)
    f = s.factorize(u.data.copy())
    ev = np.linalg.eigvalsh(a)
    assert (f.n_pos, f.n_neg, f.n_zero) == ((ev > 0).sum(), (ev < 0).sum(), 0)
    b = rng.standard_normal(n)
    np.testing.assert_allclose(s.solve(b), np.linalg.solve(a, b), rtol=1e-8, atol=1e-10)
    assert not dense_kkt(n, 3 * n)
    assert not s.leave_pivoting() and s.pivoting     # dense from the start: it stays


@pytest.mark.parametrize("n", [40, 600])
def test_the_dense_pivoting_mode_is_left_from_its_size_on(n, monkeypatch):
    """The dense mode enable_pivoting chose is left again (leave_pivoting) from
    DENSE_PIVOTING_LEAVE_MIN_N rows on, and stays below; either way each factorization
    gives the matrix's inertia and solution.  PARDISO's mode is not involved: MKL is
    hidden."""
    from caspar_backend.linsolve import pardiso_mkl
    from caspar_backend.linsolve.qdldl import DENSE_PIVOTING_LEAVE_MIN_N

    monkeypatch.setattr(pardiso_mkl, "pardiso_available", lambda: False)
    rng = np.random.default_rng(n)
    a = sp.random(n, n, density=4.0 / n, random_state=rng) + sp.eye(n)
    a = (a + a.T).toarray()
    a[np.arange(n), np.arange(n)] *= rng.choice([-1.0, 1.0], n)
    u = sp.csc_matrix(np.triu(a))
    s = QDLDLSolver(small_pivoting=False)       # (n = 40 is pivoted from the start else)
    s.analyse(SparseStructure(n, u.indptr.astype(np.int64), u.indices.astype(np.int64)))
    ev = np.linalg.eigvalsh(a)
    b = rng.standard_normal(n)
    for _ in range(2):
        assert not s.pivoting and s.enable_pivoting() and s.pivoting
        f = s.factorize(u.data.copy())
        assert (f.n_pos, f.n_neg) == ((ev > 0).sum(), (ev < 0).sum())
        np.testing.assert_allclose(a @ s.solve(b), b, rtol=1e-8, atol=1e-8)
        left = s.leave_pivoting()
        assert left == (n >= DENSE_PIVOTING_LEAVE_MIN_N) and s.pivoting == (not left)
        if not left:
            break
        f = s.factorize(u.data.copy())           # QDLDL again
        if f.ok:
            np.testing.assert_allclose(a @ s.solve(b), b, rtol=1e-6, atol=1e-6)
