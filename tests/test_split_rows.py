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
