"""A singleton constraint row ``x_j = b`` whose variable has an active bound.

Initial conditions written as constraints (``T[0, j] == 0`` with ``0 <= T <= 1``) are
singleton rows on a variable at its (relaxed) bound: ``Sigma_j`` grows to ~1e12 and the
row's true pivot ``-A_ij^2 / Sigma_j`` falls far below the static term eps = 1e-9.  With
the row's term at eps, each step missed the row by ~eps |dy| and the iterate sat at the
relaxed bound, 1e-8 off the constraint, for the rest of the solve (objective 2e-8 from
IPOPT's at tol 1e-10).  The row's term is now bounded by kappa A_ij^2 / Sigma_j as for a
private column (kkt/augmented.py)."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.linsolve.qdldl import QDLDLSolver

pytest.importorskip("qdldl")


def test_singleton_row_term_bounded_by_its_pivot():
    """w = [x, z]; row 0: x (singleton, x shared with row 1), row 1: x + z.  Row 0's term
    is kappa A^2 / Sigma_x; row 1 (no private column) keeps eps min(1, |A_1|^2)."""
    k = AugmentedKKT(nw=2, m=2, hess_rows=[1], hess_cols=[1], jac_rows=[0, 1, 1],
                     jac_cols=[0, 0, 1], linear_solver=QDLDLSolver(),
                     static_regularization=1e-9)
    k.hess_values[:] = [2.0]
    k.sigma[:] = [1e12, 0.0]
    k.jac_values[:] = [3.0, 1.0, 1.0]
    k.build()
    kappa, eps = k.PRIVATE_PIVOT_FRACTION, k.static_regularization
    np.testing.assert_allclose(-k._dstat[2:], [kappa * 9.0 / 1e12, eps], rtol=1e-12)


def _heat_control(nx=12, nt=12):
    """Boundary control of 1-D heat conduction (implicit Euler in time, central
    differences in space), zero initial temperature as constraint rows, 0 <= T <= 1."""
    pyo = pytest.importorskip("pyomo.environ")
    m = pyo.ConcreteModel()
    dx, dt = 1.0 / nx, 1.5 / nt
    m.T = pyo.Var(range(nt + 1), range(nx + 1), bounds=(0.0, 1.0))
    m.q = pyo.Var(range(1, nt + 1), bounds=(-1.0, 1.0))
    m.obj = pyo.Objective(
        expr=dx * sum((m.T[nt, j] - 0.5 * (1.0 - (j * dx) ** 2)) ** 2 for j in range(nx + 1))
        + 1e-3 * dt * sum(m.q[k] ** 2 for k in m.q))
    m.init = pyo.Constraint(range(nx + 1), rule=lambda m, j: m.T[0, j] == 0)
    m.heat = pyo.Constraint(range(1, nt + 1), range(1, nx), rule=lambda m, k, j:
                            (m.T[k, j] - m.T[k - 1, j]) / dt
                            == (m.T[k, j - 1] - 2 * m.T[k, j] + m.T[k, j + 1]) / dx ** 2)
    m.left = pyo.Constraint(range(1, nt + 1), rule=lambda m, k: m.T[k, 1] == m.T[k, 0])
    m.right = pyo.Constraint(range(1, nt + 1), rule=lambda m, k:
                             m.T[k, nx] - m.T[k, nx - 1] == dx * (m.q[k] - m.T[k, nx]))
    return m


def test_initial_condition_rows_hold_and_objective_is_ipopts():
    pyo = pytest.importorskip("pyomo.environ")
    pytest.importorskip("casadi")
    import caspar_backend  # noqa: F401  (registers the solver)
    from tests.support.pyomo_ipopt_reference import solve_reference

    ref = solve_reference(_heat_control(), {"tol": 1e-10})
    m = _heat_control()
    res = pyo.SolverFactory("caspar").solve(m, options={"tol": 1e-10})
    assert ref.success and str(res.solver.termination_condition) == "optimal"
    viol = max(abs(pyo.value(c.body) - pyo.value(c.upper))
               for c in m.component_data_objects(pyo.Constraint))
    assert viol <= 1e-10, viol
    assert abs(pyo.value(m.obj) - ref.objective) <= 1e-9 * abs(ref.objective), \
        (pyo.value(m.obj), ref.objective)
