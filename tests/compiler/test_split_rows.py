"""Wide constraint rows are split into terms and summed back (CPU), against CasADi."""

import numpy as np
import pytest

from caspar_backend import Graph, NLPModel, Problem

ca = pytest.importorskip("casadi")


def test_wide_rows_match_casadi():
    N = 300
    g = Graph()
    x = [g.var(i) for i in range(N)]
    w = np.linspace(1, 2, N)
    cons = [g.lincomb(list(w), x), g.sum([xi * xi for xi in x]),
            g.sum([x[0] * x[i] for i in range(1, 12)] + [g.exp(x[0])]), x[3] * x[4],
            g.sum([g.sin(x[i]) * x[i + 1] for i in range(20)])]
    prob = Problem(NLPModel(g, g.sum([g.cos(xi) for xi in x]), cons, -np.ones(N), np.ones(N),
                            np.zeros(len(cons)), np.zeros(len(cons))))
    # wide rows became term instances: far fewer groups than rows of distinct width
    assert len(prob.constraint_groups) <= 8
    X = ca.SX.sym("x", N)
    G = ca.vertcat(ca.dot(w, X), ca.sumsqr(X), sum(X[0] * X[i] for i in range(1, 12)) + ca.exp(X[0]),
                   X[3] * X[4], sum(ca.sin(X[i]) * X[i + 1] for i in range(20)))
    f = ca.sum1(ca.cos(X))
    lam = ca.SX.sym("l", G.shape[0])
    F = ca.Function("F", [X, lam], [G, ca.jacobian(G, X), ca.hessian(0.5 * f + ca.dot(lam, G), X)[0]])
    ev = prob.evaluator()
    rng = np.random.default_rng(0)
    for _ in range(3):
        xv, lv = rng.uniform(-1, 1, N), rng.standard_normal(len(cons))
        g_ref, j_ref, h_ref = F(xv, lv)
        np.testing.assert_allclose(ev.cons(xv), np.array(g_ref).ravel(), rtol=1e-12, atol=1e-12)
        jac = ev.jac(xv)
        assert jac.nnz == j_ref.nnz()  # duplicates summed, no extra entries
        assert abs(jac - j_ref.sparse()).max() <= 1e-12
        assert abs(ev.hess(xv, lv, 0.5) - h_ref.sparse()).max() <= 1e-11


def _shooting(N):
    """A single-shooting row: the end state of N explicit Euler steps, a wide sum whose
    every term holds the trajectory before it."""
    u = ca.SX.sym("u", 2)
    x, v = ca.SX(1.0), ca.SX(0.0)
    for k in range(N):
        x, v = x + 0.01 * v, v + 0.01 * (u[k % 2] - 0.05 * v * v) / (1 + x * x)
    return u, ca.vertcat(x, v)


def test_terms_sharing_a_trajectory_stay_one_template():
    """Split into terms, the row's shared trajectory was code in every term: the NumPy
    source grew quadratically with N (8,716 lines at N = 10, 183,496 at 40; CasADi's
    direct_single_shooting example never finished).  Such a row stays whole now: linear
    growth, and the values and derivatives are CasADi's."""
    from caspar_backend.adapters.casadi.nlp import from_casadi

    lines = {}
    for N in (20, 40):
        u, G = _shooting(N)
        P = from_casadi({"x": u, "f": ca.sumsqr(u), "g": G})
        lines[N] = P.numpy_source().count("\n")
    assert lines[40] < 2.5 * lines[20], lines
    lam = ca.SX.sym("l", 2)
    F = ca.Function("F", [u, lam], [G, ca.jacobian(G, u),
                                    ca.hessian(ca.sumsqr(u) + ca.dot(lam, G), u)[0]])
    ev = P.evaluator()
    x0, l0 = np.array([0.3, -0.7]), np.array([0.5, 2.0])
    g_ref, j_ref, h_ref = (np.array(a) for a in F(x0, l0))
    np.testing.assert_allclose(ev.cons(x0), g_ref.ravel(), rtol=1e-12)
    np.testing.assert_allclose(ev.jac(x0).toarray(), j_ref, rtol=1e-11, atol=1e-14)
    np.testing.assert_allclose(ev.hess(x0, l0).toarray(), h_ref, rtol=1e-10, atol=1e-13)
