"""SolverFactory('caspar') with ``nlp_scaling_method = 'user-scaling'`` and the model's
``scaling_factor`` Suffix (adapters/pyomo/suffixes.py), on the model of Pyomo's
``examples/pyomo/suffixes/ipopt_scaling.py``: IPOPT's iteration count on the scaled
problem written out (tests/support/scaled_reference.py), the unscaled problem's
solution, and no effect without factors."""

from __future__ import annotations

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")
cs = pytest.importorskip("casadi")

import caspar_backend  # noqa: E402,F401  (registers SolverFactory('caspar'))
from adapters.pyomo.suffixes import exported_values, scaling_factors  # noqa: E402
from tests.support.scaled_reference import ipopt_on_scaled  # noqa: E402


def example(maximize=False):
    """Pyomo's ipopt_scaling example (the objective negated and maximized when asked:
    the same problem)."""
    m = pyo.ConcreteModel()
    m.s = pyo.Set(initialize=[1, 2, 3])
    m.y = pyo.Var(bounds=(1, 5), initialize=1.0)
    m.x = pyo.Var(m.s, bounds=(1, 5), initialize=5.0)
    f = m.y * m.x[3] * (m.y + m.x[1] + m.x[2]) + m.x[2]
    m.obj = pyo.Objective(expr=-f if maximize else f,
                          sense=pyo.maximize if maximize else pyo.minimize)
    m.inequality = pyo.Constraint(expr=m.y * m.x[1] * m.x[2] * m.x[3] >= 25.0)
    m.equality = pyo.Constraint(expr=m.y**2 + m.x[1]**2 + m.x[2]**2 + m.x[3]**2 == 40.0)
    return m


def example_casadi():
    """The same problem as a bank-style dict, variables (y, x1, x2, x3)."""
    v = cs.SX.sym("v", 4)
    y, x1, x2, x3 = (v[i] for i in range(4))
    return dict(x=v, f=y * x3 * (y + x1 + x2) + x2,
                g=cs.vertcat(y * x1 * x2 * x3, y**2 + x1**2 + x2**2 + x3**2),
                x0=np.array([1.0, 5, 5, 5]), lbx=np.ones(4), ubx=np.full(4, 5.0),
                lbg=np.array([25.0, 40.0]), ubg=np.array([np.inf, 40.0]))


#: (objective, y, x[1], x[2], x[3], inequality, equality); None: no value given
FACTORS = {
    "example": (4.23, 2.0, 1.5, 5.0, 5.0, 2.0, 2.0),     # the Pyomo example's
    "mixed": (0.23, 0.5, None, 2.0, None, 1.3, 0.77),
    "nonpositive": (None, -1.0, 0.0, 3.0, None, None, 0.1),
}


def scaled(model, values):
    model.scaling_factor = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    comps = (model.obj, model.y, model.x[1], model.x[2], model.x[3], model.inequality,
             model.equality)
    for c, v in zip(comps, values):
        if v is not None:
            model.scaling_factor[c] = v
    return model


def solve(model, **options):
    res = pyo.SolverFactory("caspar").solve(model, options=dict(print_level=0, **options))
    x = np.array([pyo.value(v) for v in (model.y, *model.x.values())])
    return res, x, pyo.value(model.obj)


def _effective(values):
    """The factors IPOPT's AMPL interface would use: (obj, dx (4,), dc (2,))."""
    one = lambda v: 1.0 if v is None or v <= 0 else v  # noqa: E731
    obj = 1.0 if values[0] is None else values[0]
    return obj, np.array([one(v) for v in values[1:5]]), np.array([one(v)
                                                                   for v in values[5:]])


@pytest.mark.parametrize("case", sorted(FACTORS))
def test_example_follows_ipopt_on_the_scaled_problem(case):
    values = FACTORS[case]
    res, x, f = solve(scaled(example(), values), nlp_scaling_method="user-scaling")
    _, x_plain, f_plain = solve(example(), nlp_scaling_method="none")
    obj, dx, dc = _effective(values)
    ref, x_ref, f_ref, _, _ = ipopt_on_scaled(example_casadi(), obj, dx, dc)
    plain_ref = ipopt_on_scaled(example_casadi(), 1.0, np.ones(4), np.ones(2))[0]
    assert str(res.solver.termination_condition) == "optimal"
    iters = res.solver.statistics.black_box.number_of_iterations
    assert iters == ref.iterations
    assert ref.iterations != plain_ref.iterations    # the factors change the iterates
    np.testing.assert_allclose(x, x_ref, rtol=1e-8)
    np.testing.assert_allclose(x, x_plain, rtol=1e-7)
    assert f == pytest.approx(f_ref, rel=1e-8) and f == pytest.approx(f_plain, rel=1e-8)


def test_maximization_takes_the_factor_as_written():
    """max -F with factor s solves as min F with factor s (IPOPT's AMPL interface
    scales sense * F by the Suffix's value)."""
    values = FACTORS["mixed"]
    res_min, x_min, _ = solve(scaled(example(), values), nlp_scaling_method="user-scaling")
    res_max, x_max, _ = solve(scaled(example(maximize=True), values),
                              nlp_scaling_method="user-scaling")
    assert (res_max.solver.statistics.black_box.number_of_iterations
            == res_min.solver.statistics.black_box.number_of_iterations)
    np.testing.assert_array_equal(x_max, x_min)


def test_user_scaling_without_factors_is_none():
    res_n, x_n, f_n = solve(example(), nlp_scaling_method="none")
    res_u, x_u, f_u = solve(example(), nlp_scaling_method="user-scaling")
    assert (res_u.solver.statistics.black_box.number_of_iterations
            == res_n.solver.statistics.black_box.number_of_iterations)
    np.testing.assert_array_equal(x_u, x_n)
    assert f_u == f_n


def test_factors_are_read_only_with_user_scaling():
    res_g, x_g, _ = solve(example(), nlp_scaling_method="gradient-based")
    res_s, x_s, _ = solve(scaled(example(), FACTORS["example"]),
                          nlp_scaling_method="gradient-based")
    assert (res_s.solver.statistics.black_box.number_of_iterations
            == res_g.solver.statistics.black_box.number_of_iterations)
    np.testing.assert_array_equal(x_s, x_g)


def test_suffixes_are_collected_as_the_nl_writer_does():
    """Sub-block Suffixes count, the model's overrides a sub-block's, an indexed key
    applies to the members without a value of their own, an import Suffix is not
    read."""
    m = example()
    m.b = pyo.Block()
    m.b.z = pyo.Var(bounds=(0, 1))
    m.b.c = pyo.Constraint(expr=m.b.z + m.y <= 4)
    m.b.scaling_factor = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.b.scaling_factor[m.b.z] = 7.0
    m.b.scaling_factor[m.y] = 9.0
    m.scaling_factor = pyo.Suffix(direction=pyo.Suffix.EXPORT)
    m.scaling_factor.set_value(m.x, 3.0, expand=False)
    m.scaling_factor[m.x[2]] = 0.5
    m.scaling_factor[m.y] = 2.0
    m.other = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    vals = exported_values(m, "scaling_factor")
    assert [vals[v] for v in (m.y, m.x[1], m.x[2], m.x[3], m.b.z)] == [2.0, 3.0, 0.5,
                                                                       3.0, 7.0]
    assert m.obj not in vals and m.equality not in vals

    class Mapping:               # the mapping's parts that the factors read
        objective = m.obj
        x_vars = [m.x[1], m.b.z, m.y]
        constraints = [m.equality, m.b.c]

    obj, x, g = scaling_factors(m, Mapping)
    assert obj == 1.0 and g is None
    np.testing.assert_array_equal(x, [3.0, 7.0, 2.0])
    assert scaling_factors(example(), Mapping) is None
