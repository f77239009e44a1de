"""linear_solver='pardisomkl': Intel MKL's PARDISO (Bunch-Kaufman pivoting, inertia).

The factorization against dense linear algebra (inertia from the eigenvalues, solves
against NumPy's), on matrices an unpivoted LDL^T cannot factorize without a static term;
a whole solve against IPOPT (Pyomo's lqcp example, where qdldl's factors lose the
digits); concurrent solves; and the substitution where MKL is missing.  MKL comes with
the test extra (``pip install -e '.[test]'``), so these run in CI.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.linsolve import make_linear_solver
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.pardiso_mkl import PardisoMKLSolver, pardiso_available

from .test_linear_solvers import _lqcp, _saddle, _saddle_upper, _with_diagonal

pytestmark = pytest.mark.skipif(not pardiso_available(),
                                reason="Intel MKL not installed (the 'mkl' extra)")


def _structure(up):
    return SparseStructure(up.shape[0], up.indptr.astype(np.int64),
                           up.indices.astype(np.int64))


def _inertia(k):
    ev = np.linalg.eigvalsh(k.toarray())
    return int((ev > 0).sum()), int((ev < 0).sum()), int((ev == 0).sum())


def _random_kkt_upper(rng, nw, m):
    """Upper triangle (CSC, every diagonal stored) of [[H, A^T], [A, 0]], H symmetric
    indefinite and sparse, A sparse with full row rank."""
    h = sp.random(nw, nw, 0.05, random_state=rng)
    h = h + h.T + sp.diags(rng.standard_normal(nw))
    a = sp.random(m, nw, 0.1, random_state=rng) + sp.eye(m, nw)
    return _saddle(h, a)


@pytest.mark.parametrize("seed", range(4))
def test_inertia_and_solve_match_dense(seed):
    rng = np.random.default_rng(seed)
    k, up = _random_kkt_upper(rng, 60, 25)
    s = make_linear_solver("pardisomkl")
    s.analyse(_structure(up))
    f = s.factorize(up.data)
    assert f.ok and f.inertia == _inertia(k)
    b = rng.standard_normal(k.shape[0])
    x = s.solve(b)
    np.testing.assert_allclose(x, np.linalg.solve(k.toarray(), b), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(s.matvec(x), k @ x, rtol=1e-13, atol=1e-13)
    out = np.empty_like(b)
    assert s.solve(b, out=out) is out and np.array_equal(out, x)
    # new values in the same pattern (the analysis kept): 2K
    f2 = s.factorize(2.0 * up.data)
    assert f2.inertia == f.inertia
    np.testing.assert_allclose(s.solve(b), x / 2, rtol=1e-7, atol=1e-9)
    s.release()
    # after release the next factorization analyses again
    assert s.factorize(up.data).inertia == f.inertia
    s.release()


def test_perturbed_pivots_mean_singular_until_regularized():
    """[[H, A^T], [A, 0]] with m zero entries on H's diagonal beside A's columns:
    PARDISO perturbs pivots there even after an analysis on these values, so K counts as
    singular (module doc: IPOPT's repeated_perturbation_means_singular); with the
    inertia correction's delta_w on H and -delta_c on the constraint block it factorizes
    with the expected inertia (n, m, 0) and solves that matrix to round-off."""
    k, up = _saddle_upper(900, 700)
    s = PardisoMKLSolver()
    s.analyse(_structure(up))
    f = s.factorize(up.data)
    assert not f.ok and f.n_zero > 0
    e = np.r_[np.full(900, 1e-4), np.full(700, -1e-8)]
    f = s.factorize(_with_diagonal(up, e))
    assert f.ok and f.inertia == (900, 700, 0)
    b = np.random.default_rng(3).standard_normal(k.shape[0])
    kr = (k + sp.diags(e)).tocsc()
    np.testing.assert_allclose(s.solve(b), sp.linalg.spsolve(kr, b), rtol=1e-8, atol=1e-10)
    # a shifted diagonal changes the inertia as the eigenvalues say
    e2 = np.r_[np.full(900, -3.0), np.full(700, -1e-8)]
    f = s.factorize(_with_diagonal(up, e2))
    assert f.inertia == _inertia((k + sp.diags(e2)).tocsc())


def test_singular_matrix_is_not_ok():
    # [[1, 1], [1, 1]] (upper triangle, CSC): rank 1
    s = make_linear_solver("pardisomkl")
    s.analyse(SparseStructure(2, np.array([0, 1, 3]), np.array([0, 0, 1])))
    f = s.factorize(np.array([1.0, 1.0, 1.0]))
    assert not f.ok and f.n_zero >= 1
    f = s.factorize(np.array([1.0, 2.0, 1.0]))
    assert f.ok and f.inertia == (1, 1, 0)


def test_lqcp_as_ipopt():
    """Pyomo's lqcp example (n = 40: 1,722 variables, 1,681 PDE rows with coefficients
    ~1/h^2) at IPOPT's defaults.  qdldl's unpivoted factors leave its inertia wrong at
    mu ~ 1e-9 (Hessian regularization 1e-4 on a convex QP, 24 iterations, objective 1e-5
    from IPOPT's); PARDISO's pivoted LDL^T gives IPOPT's path: its iteration count and
    its objective."""
    pyo = pytest.importorskip("pyomo.environ")
    from tests.support.pyomo_ipopt_reference import objective_value, solve_reference

    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    ref = solve_reference(_lqcp(40))
    mdl = _lqcp(40)
    res = pyo.SolverFactory("caspar").solve(mdl, options={"linear_solver": "pardisomkl"})
    assert "Optimal Solution Found" in str(res.solver.message)
    assert res.solver.statistics.black_box.number_of_iterations == ref.iterations
    f = objective_value(mdl)
    assert abs(f - ref.objective) <= 1e-9 * abs(ref.objective), (f, ref.objective)


def test_duplicated_constraint_as_ipopt():
    """A Jacobian with two equal rows (x0 + x1 = 1 twice): its K is singular and PARDISO
    perturbs a pivot; taken as singular, delta_c regularizes it and the solve follows
    IPOPT's (MUMPS) path: the same iterations and optimum (IPOPT's default for
    PARDISO, taking the perturbed factorization, ran into the iteration limit)."""
    ca = pytest.importorskip("casadi")
    from caspar_backend import Graph, NLPModel, Problem

    g = Graph()
    x = [g.var(i) for i in range(3)]
    cons = [x[0] + x[1], x[0] + x[1], x[0] * x[2] + x[1]]
    gb = np.array([1.0, 1.0, 0.5])
    x0 = np.array([0.3, 0.2, 0.1])
    pr = Problem(NLPModel(g, x[0] ** 2 + x[1] ** 2 + (x[2] - 1) ** 2, cons,
                          np.full(3, -np.inf), np.full(3, np.inf), gb, gb, x0=x0))
    r = pr.solve(print_level=0, linear_solver="pardisomkl", compiled_path="no")
    X = ca.SX.sym("x", 3)
    S = ca.nlpsol("s", "ipopt", {"x": X, "f": X[0] ** 2 + X[1] ** 2 + (X[2] - 1) ** 2,
                                 "g": ca.vertcat(X[0] + X[1], X[0] + X[1],
                                                 X[0] * X[2] + X[1])},
                  {"print_time": 0, "ipopt.print_level": 0, "ipopt.sb": "yes"})
    ref = S(x0=x0, lbg=gb, ubg=gb)
    assert S.stats()["return_status"] == r.status == "Solve_Succeeded"
    assert r.iterations == S.stats()["iter_count"]
    assert abs(r.f - float(ref["f"])) <= 1e-10 * abs(float(ref["f"]))
    np.testing.assert_allclose(r.x, np.asarray(ref["x"]).ravel(), rtol=1e-8)


def _problem():
    """A small constrained NLP with an equality, an inequality and bounds, x0 and a
    parameter (HS071 with a parametric right-hand side)."""
    from caspar_backend import Graph, NLPModel, Problem

    g = Graph()
    x = [g.var(i) for i in range(4)]
    p = g.param(0)
    obj = x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    cons = [x[0] * x[1] * x[2] * x[3], x[0] ** 2 + x[1] ** 2 + x[2] ** 2 + x[3] ** 2 - p]
    return Problem(NLPModel(g, obj, cons, np.ones(4), np.full(4, 5.0),
                            np.array([25.0, 0.0]), np.array([np.inf, 0.0]),
                            x0=np.array([1.0, 5.0, 5.0, 1.0]), p=np.array([40.0])))


def test_solve_and_concurrent_solves_equal_sequential_ones():
    """HS071 through the general path with pardisomkl: IPOPT's published optimum; eight
    threads at once (each its own PARDISO handle) give the sequential answers bit for
    bit."""
    import threading

    pr = _problem()
    opts = dict(print_level=0, linear_solver="pardisomkl", compiled_path="no")
    r = pr.solve(**opts)
    assert r.status == "Solve_Succeeded" and r.extra["linear_solver"] == "pardisomkl"
    assert abs(r.f - 17.014017145179164) <= 1e-8 * 17.0
    ps = [38.0 + 0.5 * i for i in range(8)]
    seq = {q: pr.solve(p=[q], **opts) for q in ps}
    got, errors = {}, []
    barrier = threading.Barrier(len(ps))

    def run(q):
        try:
            barrier.wait()
            got[q] = pr.solve(p=[q], **opts)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(q,)) for q in ps]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    for q in ps:
        a, b = seq[q], got[q]
        assert (a.status, a.iterations, repr(a.f), a.x.tobytes()) == \
            (b.status, b.iterations, repr(b.f), b.x.tobytes())


def test_without_mkl_pardisomkl_is_substituted(monkeypatch):
    """IPOPT's rule for caspar: a script's IPOPT option never fails.  Where MKL is not
    installed, linear_solver='pardisomkl' warns (naming the extra) and solves with
    qdldl."""
    from caspar_backend.linsolve import pardiso_mkl

    monkeypatch.setattr(pardiso_mkl, "pardiso_available", lambda: False)
    pr = _problem()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = pr.solve(print_level=0, linear_solver="pardisomkl", compiled_path="no")
    assert r.status == "Solve_Succeeded" and r.extra["linear_solver"] == "qdldl"
    assert any("caspar-backend[mkl]" in str(x.message) for x in w)


def _bank_params():
    from tests.support.problem_bank import bank

    return [pytest.param(p.name, marks=pytest.mark.slow) if p.slow else p.name
            for p in bank()]


@pytest.mark.parametrize("name", _bank_params())
def test_bank_with_pardisomkl_against_ipopt(name):
    """The 69-problem bank with linear_solver='pardisomkl' (PARDISO from the first
    factorization, no static regularization): IPOPT's status class, objective and
    iteration bounds, as the default solver is held to (tests/solver/test_solver_bank.py;
    2026-12-05: all 69 statuses IPOPT's, 64 at IPOPT's iteration count)."""
    pytest.importorskip("casadi")
    from tests.support.assertions import assert_matches_ipopt
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import solved

    p = {b.name: b for b in bank()}[name]
    ri, rc = solved(p, {"linear_solver": "pardisomkl"})
    assert rc.extra["linear_solver"] == "pardisomkl"
    assert_matches_ipopt(p, ri, rc)


def test_ipopt_pardisomkl_options_reach_pardiso():
    """IPOPT's pardisomkl_* options set PARDISO's parameters; a solve with a minimum
    degree order reaches the same optimum."""
    from caspar_backend.solver.options import resolve_options

    opts = resolve_options({"pardisomkl_order": "amd", "pardisomkl_matching_strategy":
                            "constraints", "pardisomkl_max_iterative_refinement_steps": 3})
    s = make_linear_solver("pardisomkl", None, opts)
    s.analyse(SparseStructure(2, np.array([0, 1, 3]), np.array([0, 0, 1])))
    assert (s._iparm[1], s._iparm[12], s._iparm[7]) == (0, 3, 3)
    assert s.factorize(np.array([1.0, 2.0, 1.0])).inertia == (1, 1, 0)
    d = make_linear_solver("pardisomkl")
    d.analyse(SparseStructure(2, np.array([0, 1, 3]), np.array([0, 0, 1])))
    assert (d._iparm[1], d._iparm[12], d._iparm[7]) == (2, 1, 1)
    r = _problem().solve(print_level=0, linear_solver="pardisomkl", compiled_path="no",
                         pardisomkl_order="amd")
    assert r.status == "Solve_Succeeded" and abs(r.f - 17.014017145179164) <= 1e-7
