"""Parameters as variables: derivatives with respect to p against CasADi's AD."""

import numpy as np
import pytest

from caspar_backend import Graph, NLPModel, Problem
from caspar_backend.passes import parameters_as_variables, rebuild

ca = pytest.importorskip("casadi")


def _model():
    g = Graph()
    x = [g.var(i) for i in range(3)]
    p = [g.param(k) for k in range(2)]
    f = p[0] * (x[0] - 1) ** 2 + g.exp(p[1] * x[1]) + x[2] ** 2
    cons = [x[0] * x[1] - p[0] ** 2, g.sin(p[1]) * x[2] + x[0] * p[0] * p[1], x[1] + x[2]]
    return NLPModel(g, f, cons, lbx=[-5] * 3, ubx=[5] * 3, lbg=[0, -1, -np.inf],
                    ubg=[0, 1, 2], p=[1.3, 0.4])


def _casadi():
    X, P = ca.SX.sym("x", 3), ca.SX.sym("p", 2)
    f = P[0] * (X[0] - 1) ** 2 + ca.exp(P[1] * X[1]) + X[2] ** 2
    g = ca.vertcat(X[0] * X[1] - P[0] ** 2, ca.sin(P[1]) * X[2] + X[0] * P[0] * P[1], X[1] + X[2])
    return X, P, f, g


def test_parameter_derivatives_match_casadi():
    prob = Problem(_model())
    X, P, f, g = _casadi()
    lam = ca.SX.sym("l", 3)
    L = 0.7 * f + ca.dot(lam, g)
    F = ca.Function("F", [X, P, lam], [ca.gradient(f, P), ca.jacobian(g, P),
                                       ca.jacobian(ca.gradient(L, X), P), ca.gradient(L, P)])
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, lv, pv = rng.uniform(-1, 1, 3), rng.standard_normal(3), rng.uniform(0.5, 1.5, 2)
        d = prob.parameter_derivatives(x, lv, p=pv, obj_factor=0.7)
        gp, jp, hxp, lp = (np.array(v) for v in F(x, pv, lv))
        np.testing.assert_allclose(d["grad_p"], gp.ravel(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(d["jac_p"].toarray(), jp, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(d["hess_xp"].toarray(), hxp, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(d["lam_p"], lp.ravel(), rtol=1e-12, atol=1e-12)


def test_parameters_as_variables_is_pure_and_named():
    m = _model()
    before = [id(c) for c in m.constraints]
    aug = parameters_as_variables(m)
    assert [id(c) for c in m.constraints] == before and m.n == 3
    assert aug.n == 5 and aug.n_params == 0
    np.testing.assert_array_equal(aug.lbx[3:], m.p)
    assert aug.var_names[3:] == m.param_names


def test_rebuild_maps_leaves_and_resimplifies():
    g = Graph()
    x, p = g.var(0), g.param(0)
    h = Graph()
    images = {"var": lambda v: h.var(0), "param": lambda v: h.const(0.0),
              "const": lambda v: h.const(v.attr)}
    (e,) = rebuild([x * p + 1], h, lambda v: images[v.op](v))
    assert e.op == "const" and e.attr == 1.0
