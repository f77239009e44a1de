"""Pyomo's front door to least squares (caspar_backend.pyomo.least_squares): residuals
read from a sum-of-squares objective or given as an Expression component, solved by
caspar's Levenberg-Marquardt and checked against scipy.optimize.least_squares on the same
data (an independent solver); parameters and bounds read at each solve; bad input named."""

import numpy as np
import pytest

pe = pytest.importorskip("pyomo.environ")
so = pytest.importorskip("scipy.optimize")

from caspar_backend.errors import ModelError  # noqa: E402
from caspar_backend.lsq.losses import Huber  # noqa: E402
from caspar_backend.pyomo import least_squares  # noqa: E402

T = np.linspace(0, 1, 30)
Y = 2.0 * np.exp(-1.3 * T) + 0.05 * np.sin(7 * T)
Y[[4, 17]] += [0.8, -0.6]                       # outliers, for the robust loss


def model(weight=0.5):
    m = pe.ConcreteModel()
    m.a = pe.Var(initialize=1.0)
    m.b = pe.Var(initialize=0.0, bounds=(-5, 5))
    m.I = pe.RangeSet(0, len(T) - 1)
    m.e = pe.Expression(m.I, rule=lambda m, i: m.a * pe.exp(m.b * T[i]) - Y[i])
    m.obj = pe.Objective(expr=weight * sum(m.e[i] ** 2 for i in m.I))
    return m


def scipy_fit(**kw):
    return so.least_squares(lambda p: p[0] * np.exp(p[1] * T) - Y, [1.0, 0.0], xtol=1e-15,
                            ftol=1e-15, gtol=1e-15, **kw)


@pytest.mark.parametrize("weight", [0.5, 1.0, 3.0])
def test_sum_of_squares_objective_against_scipy(weight):
    m = model(weight)
    s = least_squares(m).solve(function_tolerance=1e-12, parameter_tolerance=1e-12)
    ref = scipy_fit()
    assert s.termination_type == "CONVERGENCE"
    np.testing.assert_allclose([m.a.value, m.b.value], ref.x, rtol=1e-6)
    # Ceres' cost 1/2 |r|^2 is the objective's value: r_i = sqrt(2 w) e_i
    assert s.final_cost == pytest.approx(pe.value(m.obj), rel=1e-12)
    assert s.final_cost == pytest.approx(2 * weight * ref.cost, rel=1e-8)


def test_given_residuals_with_a_robust_loss_against_scipy():
    m = model()
    m.obj.deactivate()
    s = least_squares(m, m.e, loss=Huber(0.1)).solve(function_tolerance=1e-12,
                                                      parameter_tolerance=1e-12)
    ref = scipy_fit(loss="huber", f_scale=0.1)
    np.testing.assert_allclose([m.a.value, m.b.value], ref.x, rtol=1e-6)
    assert s.final_cost == pytest.approx(ref.cost, rel=1e-8)
    # residual blocks of two rows: one loss per pair
    m.a.value, m.b.value = 1.0, 0.0
    paired = least_squares(m, m.e, residual_block_size=2)
    assert paired.problem.num_residual_blocks == len(T) // 2


def test_parameters_bounds_and_fixed_variables_read_at_each_solve():
    m = model()
    m.k = pe.Param(initialize=1.0, mutable=True)
    m.obj.set_value(0.5 * sum((m.k * m.a * pe.exp(m.b * T[i]) - Y[i]) ** 2 for i in m.I))
    tight = dict(function_tolerance=1e-12, parameter_tolerance=1e-12)
    lsq = least_squares(m)
    lsq.solve(**tight)
    a1 = m.a.value
    m.k = 2.0                                     # the same fit with a halved amplitude
    lsq.solve(**tight)
    assert m.a.value == pytest.approx(a1 / 2, rel=1e-6)
    m.b.setub(-1.5)                               # a bound that binds
    lsq.solve(**tight)
    assert m.b.value == pytest.approx(-1.5, abs=1e-12)
    m.b.setub(5)
    m.b.fix(-1.0)                                 # fixed: a parameter, unchanged
    lsq2 = least_squares(m)
    assert [v.name for v in lsq2.mapping.x_vars] == ["a"]
    lsq2.solve(**tight)
    assert m.b.value == -1.0
    ref = so.least_squares(lambda p: 2.0 * p[0] * np.exp(-1.0 * T) - Y, [1.0], xtol=1e-15,
                           ftol=1e-15, gtol=1e-15)
    assert m.a.value == pytest.approx(ref.x[0], rel=1e-6)


def test_bad_input_is_named():
    m = model()
    m.c = pe.Constraint(expr=m.a >= 0)
    with pytest.raises(ModelError, match="constraint c is active"):
        least_squares(m)
    m.c.deactivate()
    m.obj.set_value(sum(m.e[i] ** 2 for i in m.I) + m.a)
    with pytest.raises(ModelError, match="objective obj is not a sum of weighted squares"):
        least_squares(m)
    m.obj.set_value(sum(m.e[i] ** 2 for i in m.I) + 1.0)
    with pytest.raises(ModelError, match="objective obj is not a sum"):
        least_squares(m)
    m.obj.set_value(-sum(m.e[i] ** 2 for i in m.I))
    with pytest.raises(ModelError, match="objective obj"):
        least_squares(m)
    m.obj.set_value(sum(m.e[i] ** 2 for i in m.I))
    m.obj.sense = pe.maximize
    with pytest.raises(ModelError, match="maximized"):
        least_squares(m)
    with pytest.raises(ModelError, match="does not divide the 30 residuals"):
        least_squares(m, m.e, residual_block_size=4)
    m.obj.deactivate()
    with pytest.raises(ModelError, match="0 active objectives"):
        least_squares(m)
