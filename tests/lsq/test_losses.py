"""Robust losses: Ceres' formulas against finite differences, and robust fits against
scipy.optimize.least_squares (whose huber / soft_l1 / cauchy with f_scale = a are
Ceres' HuberLoss / SoftLOneLoss / CauchyLoss(a) for one-row residual blocks)."""

import numpy as np
import pytest
import scipy.optimize as so

from caspar_backend import Graph
from caspar_backend.errors import ModelError
from caspar_backend.lsq import Cauchy, Huber, LeastSquaresProblem, SoftL1
from caspar_backend.lsq.losses import Corrector

LOSSES = [(Huber, "huber"), (SoftL1, "soft_l1"), (Cauchy, "cauchy")]


@pytest.mark.parametrize("cls,_", LOSSES)
def test_derivatives_match_finite_differences(cls, _):
    loss = cls(0.7)
    s = np.array([0.01, 0.3, 0.48, 0.5, 2.0, 30.0])
    h = 1e-6
    r0, r1, r2 = loss.rho(s)
    np.testing.assert_allclose(r1, (loss.rho(s + h)[0] - loss.rho(s - h)[0]) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(r2, (loss.rho(s + h)[1] - loss.rho(s - h)[1]) / (2 * h),
                               rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(loss.rho(np.array([1e-12]))[0], 1e-12, rtol=1e-6)  # rho ~ s near 0


@pytest.mark.parametrize("cls,name", LOSSES)
def test_robust_fit_matches_scipy(cls, name):
    rng = np.random.default_rng(3)
    t = np.linspace(0, 2, 60)
    y = 2.0 * np.exp(-1.3 * t) + 0.5 + 0.02 * rng.standard_normal(60)
    y[::7] += 1.5                                  # outliers
    g = Graph()
    a, b, c = g.var(0), g.var(1), g.var(2)
    res = [a * g.exp(b * float(ti)) + c - float(yi) for ti, yi in zip(t, y)]
    P = LeastSquaresProblem.from_expressions(g, res, x0=[1.0, 0.0, 0.0], loss=cls(0.1))
    s = P.solve(function_tolerance=1e-15, gradient_tolerance=1e-14, parameter_tolerance=1e-15,
                max_num_iterations=200)
    ref = so.least_squares(lambda x: x[0] * np.exp(x[1] * t) + x[2] - y, [1.0, 0.0, 0.0],
                           loss=name, f_scale=0.1, xtol=1e-15, ftol=1e-15, gtol=1e-15)
    assert s.final_cost == pytest.approx(ref.cost, rel=1e-7)
    np.testing.assert_allclose(s.x, ref.x, rtol=1e-5)
    assert s.final_cost == pytest.approx(P.cost(s.x))
    # the plain fit is pulled by the outliers; the robust one is not
    plain = so.least_squares(lambda x: x[0] * np.exp(x[1] * t) + x[2] - y, [1.0, 0.0, 0.0])
    assert abs(s.x[2] - 0.5) < abs(plain.x[2] - 0.5)


def test_corrected_gradient_is_the_robust_gradient():
    """J~^T r~ = grad 1/2 sum_b rho(|r_b|^2) for two-row blocks (finite differences)."""
    rng = np.random.default_rng(0)
    A = rng.standard_normal((6, 3))
    block = np.array([0, 0, 1, 1, 2, 2])
    loss = Cauchy(0.5)

    def cost(x):
        r = A @ x + 0.3
        return 0.5 * np.sum(loss.rho(np.bincount(block, weights=r * r))[0])

    x = rng.standard_normal(3)
    r = A @ x + 0.3
    corr = Corrector(loss, r, block, 3)
    rows, cols = np.nonzero(np.ones_like(A))
    Jt = corr.jacobian(A[rows, cols], rows, cols, 3)
    grad = np.bincount(cols, weights=Jt * corr.residuals(r)[rows], minlength=3)
    h = 1e-6
    fd = np.array([(cost(x + h * e) - cost(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6)
    assert corr.cost == pytest.approx(cost(x))


def test_loss_names_and_errors():
    g = Graph()
    P = LeastSquaresProblem.from_expressions(g, [g.var(0) - 1.0], x0=[0.0], loss="huber")
    assert isinstance(P.loss, Huber) and P.loss.a == 1.0
    with pytest.raises(ModelError, match="unknown loss"):
        LeastSquaresProblem.from_expressions(g, [g.var(0) - 1.0], x0=[0.0], loss="tukey")
    with pytest.raises(ModelError, match="scale"):
        Huber(-1.0)
