"""The static regularization of the augmented KKT system (kkt/augmented.py): the terms
that make the non-pivoting LDL^T of K well defined, and the rules that keep each term
below the pivot it perturbs (a slack row's, a column's own scale, a singleton row's, a
row's squared norm).  Each section names the failure that led to its rule."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.linsolve.qdldl import QDLDLSolver
from tests.support import ipopt

pytest.importorskip("qdldl")


# ======================================================================================
# The static term of a constraint row with a slack is bounded by the slack's pivot.
#
# K for  min h/2 x^2  s.t.  g(x) = a x - s = 0,  s >= 0  with the slack at its bound
# (barrier term Sigma_s = 1e12) and x at one too (H = h + Sigma_x = 1e12) is
#
#     [ H   0   a ]
#     [ 0   S  -1 ]       whose constraint pivot is  -(a^2 / H + 1 / S) ~ -2e-12.
#     [ a  -1   0 ]
#
# A static term eps = 1e-6 on that row replaced the pivot by ~-1e-6: refinement against K
# then diverges (residual ratio ~1), the step ignores the row, and an active inequality
# stays violated (case9241_pegase stalled at a primal infeasibility of 6e-6 this way).  The
# row's term is now at most kappa = 1e-2 of the part of its pivot that its private columns
# (the slack) give, and refinement recovers K's solution; the test also runs with the
# bound switched off to show that it is what makes the difference.

def _slack_kkt(two_rows=False, big=1e12, eps=1e-6):
    """w = [x, s], row 0: x - s (s private to it); with ``two_rows`` a variable z (with a
    Hessian entry) and a second row 1e-3 (x + z), which shares x and has no private
    column (nor is it a singleton row, whose column would count as private)."""
    rows, cols, vals = [0, 0], [0, 1], [1.0, -1.0]
    hess = [0]
    if two_rows:
        rows, cols, vals, hess = rows + [1, 1], cols + [0, 2], vals + [1e-3, 1e-3], [0, 2]
    nw = 2 + two_rows
    k = AugmentedKKT(nw=nw, m=1 + two_rows, hess_rows=hess, hess_cols=hess, jac_rows=rows,
                     jac_cols=cols, linear_solver=QDLDLSolver(), static_regularization=eps)
    k.hess_values[:] = 0.0
    k.sigma[:] = big
    k.jac_values[:] = vals
    return k, rows, cols


def _slack_dense(k, rows, cols):
    H = np.diag(k.sigma + k.delta_w)
    H[0, 0] += k.hess_values[0]
    A = np.zeros((k.m, k.nw))
    A[rows, cols] = k.jac_values
    return np.block([[H, A.T], [A, -k.delta_c * np.eye(k.m)]])


def test_private_columns_found():
    k, _, _ = _slack_kkt(two_rows=True)
    assert k._priv_col.tolist() == [1]          # the slack; x is shared by both rows
    assert np.isinf(k._priv_none[1]) and k._priv_none[0] == 0.0


def test_static_term_of_a_slack_row_is_bounded_by_its_pivot():
    k, _, _ = _slack_kkt(two_rows=True)
    k.build()
    kappa, eps = k.PRIVATE_PIVOT_FRACTION, k.static_regularization
    # row 0: min(eps min(1, |A_0|^2), kappa * 1 / Sigma_s); row 1: eps |A_1|^2
    np.testing.assert_allclose(-k._dstat[3:], [kappa * 1e-12, eps * 2e-6], rtol=1e-12)


class _MagnitudePivoting(QDLDLSolver):
    """A solver whose factorization pivots by magnitude, as cuDSS's Bunch-Kaufman does."""

    row_static_factor = 1e-4


def test_rows_term_scaled_for_a_solver_that_pivots():
    """The rows' term carries the solver's ``row_static_factor`` before the slack bound;
    the columns' term does not (session 49: with cuDSS's Bunch-Kaufman the full rows' term
    biased Van der Pol collocation's steps and doubled case1803_snem's iterations)."""
    k, _, _ = _slack_kkt(two_rows=True)
    k.build()
    full = k._dstat.copy()
    p, _, _ = _slack_kkt(two_rows=True)
    p.solver = _MagnitudePivoting()
    p.build()
    kappa, eps = p.PRIVATE_PIVOT_FRACTION, p.static_regularization
    # row 0: min(1e-4 eps, kappa / Sigma_s) -- the slack bound, as before; row 1 scaled
    np.testing.assert_allclose(-p._dstat[3:], [kappa * 1e-12, 1e-4 * eps * 2e-6], rtol=1e-12)
    np.testing.assert_array_equal(p._dstat[:3], full[:3])


def test_cudss_row_factor_follows_its_pivoting():
    from caspar_backend.linsolve.cudss import PIVOTING_ROW_STATIC_FACTOR, CudssSolver

    s = CudssSolver.__new__(CudssSolver)        # (no device: the rule alone)
    s.pivoting = True
    assert s.row_static_factor == PIVOTING_ROW_STATIC_FACTOR < 1.0
    s.pivoting = False           # cuDSS 0.8's static pivoting keeps the full term
    assert s.row_static_factor == 1.0
    assert QDLDLSolver().row_static_factor == 1.0


@pytest.mark.parametrize("bounded", [True, False])
def test_refinement_recovers_K_solution(bounded, monkeypatch):
    if not bounded:
        monkeypatch.setattr(AugmentedKKT, "PRIVATE_PIVOT_FRACTION", 1e300)
    k, rows, cols = _slack_kkt()
    k.build()
    fact, ok = k.factorize()
    assert ok
    rhs_w, rhs_c = np.array([1.0, 2.0]), np.array([3e-6])
    dw, dy = k.solve(rhs_w, rhs_c)
    # K is far too ill-conditioned (~1e24) for a reference solution; what matters is
    # whether the step satisfies the linearized row  dx - ds = rhs_c  (judged with the
    # dense K, independently of the KKT class): to the precision the 1e12 barrier terms
    # leave (x and s are found from 1e12 x + dy = 1 by cancellation: ~1e-4 relative)
    K, b, z = _slack_dense(k, rows, cols), np.concatenate([rhs_w, rhs_c]), np.concatenate([dw, dy])
    row_err = abs((K @ z - b)[2]) / abs(rhs_c[0])
    if bounded:
        assert k.last_residual_ratio <= 1e-10 and row_err <= 1e-3, \
            (k.last_residual_ratio, row_err)
    else:   # the unbounded eps = 1e-6 term: the step ignores the row
        assert k.last_residual_ratio > 1e-10 and row_err > 0.5, (k.last_residual_ratio, row_err)


# ======================================================================================
# The first block's static term is relative to each column's scale.
#
# K for a problem with a well-scaled variable x1 in one constraint and a badly scaled one x2
# (curvature 3.4e-18, in no constraint: hs054's x6, whose objective term is
# (x6 - 1e8)^2 / 2.5e17) is
#
#     [ 1   0        1 ]
#     [ 0   3.4e-18  0 ]       (x2's Newton step: r_2 / 3.4e-18)
#     [ 1   0        0 ]
#
# An absolute static term eps = 1e-9 on x2's pivot makes the factorized pivot ~1e-9:
# refinement against K recovers the true pivot only at the rate 3.4e-18 / 1e-9 per step,
# and its residual test, dominated by the O(1) rows, passes at once, so the step for x2
# came out ~3e-9 times Newton's (hs054 ended at f = -0.9027 against IPOPT's -0.9081).  The
# term is now eps min(1, |K_j|_2) per column.

TINY = 3.4e-18


def _primal_kkt(eps=1e-9):
    k = AugmentedKKT(nw=2, m=1, hess_rows=[0, 1], hess_cols=[0, 1], jac_rows=[0],
                     jac_cols=[0], linear_solver=QDLDLSolver(), static_regularization=eps)
    k.hess_values[:] = [1.0, TINY]
    k.jac_values[:] = [1.0]
    return k


def _primal_dense(k):
    return np.array([[k.hess_values[0] + k.sigma[0], 0.0, k.jac_values[0]],
                     [0.0, k.hess_values[1] + k.sigma[1], 0.0],
                     [k.jac_values[0], 0.0, 0.0]])


def test_static_term_is_relative_to_the_column():
    k = _primal_kkt()
    k.sigma[:] = [3.0, 0.0]
    k.build()
    eps = k.static_regularization
    # column 0: |(1 + 3, 0, 1)| = sqrt(17) > 1 -> eps; column 1: |(TINY)| -> eps * TINY
    np.testing.assert_allclose(k._dstat[:2], [eps, eps * TINY], rtol=1e-12)
    k.delta_w = 1e-4                  # with a Hessian perturbation there is none at all
    k.build()
    assert np.all(k._dstat[:2] == 0.0)


def test_off_diagonal_hessian_entries_count_for_both_columns():
    k = AugmentedKKT(nw=2, m=0, hess_rows=[0, 1], hess_cols=[0, 0], jac_rows=[],
                     jac_cols=[], linear_solver=QDLDLSolver(), static_regularization=1e-9)
    k.hess_values[:] = [0.0, 1e-3]    # W = [[0, 1e-3], [1e-3, 0]]
    k.build()
    np.testing.assert_allclose(k._dstat[:2], [1e-12, 1e-12], rtol=1e-12)


@pytest.mark.parametrize("relative", [True, False])
def test_newton_step_of_a_badly_scaled_variable(relative, monkeypatch):
    if not relative:                  # the former absolute term: the test must fail then
        monkeypatch.setattr(AugmentedKKT, "_primal_static_term",
                            AugmentedKKT._uniform_primal_static_term)
    k = _primal_kkt()
    k.build()
    fact, ok = k.factorize()
    assert ok
    rhs_w, rhs_c = np.array([1.0, 1e-10]), np.array([0.5])
    dw, dy = k.solve(rhs_w, rhs_c)
    ref = np.linalg.solve(_primal_dense(k), np.concatenate([rhs_w, rhs_c]))
    err = abs(dw[1] - ref[1]) / abs(ref[1])
    if relative:
        assert err < 1e-8, (dw, ref)
        np.testing.assert_allclose(np.concatenate([dw, dy]), ref, rtol=1e-8)
    else:
        assert err > 0.5


# ======================================================================================
# A singleton constraint row ``x_j = b`` whose variable has an active bound.
#
# Initial conditions written as constraints (``T[0, j] == 0`` with ``0 <= T <= 1``) are
# singleton rows on a variable at its (relaxed) bound: ``Sigma_j`` grows to ~1e12 and the
# row's true pivot ``-A_ij^2 / Sigma_j`` falls far below the static term eps = 1e-9.  With
# the row's term at eps, each step missed the row by ~eps |dy| and the iterate sat at the
# relaxed bound, 1e-8 off the constraint, for the rest of the solve (objective 2e-8 from
# IPOPT's at tol 1e-10).  The row's term is now bounded by kappa A_ij^2 / Sigma_j as for a
# private column (kkt/augmented.py).

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


# ======================================================================================
# Constraint rows of a small scale: IPOPT (MUMPS, no static term) solves
# min 1/2 |x|^2  s.t.  a (x1 - x2) = a,  a (x2 - x3) = a  exactly in one Newton step for any
# a > 0.  With a uniform static regularization of the non-pivoting LDL^T (eps = 1e-9 on
# the constraint block, refined away against K) caspar stopped at x = 0.99993 (a = 1e-4,
# Solve_Succeeded) and 1.6e-4 (a = 1e-6, Solved_To_Acceptable_Level): eps dominated the
# constraint pivots ~a^2 and the inexact steps met the (absolute) stopping test away from
# the solution (1, 0, -1).  The static term is now scaled by each row's squared norm.

def _scaled_rows_problem(a):
    cs = pytest.importorskip("casadi")
    x = cs.SX.sym("x", 3)
    return {"x": x, "f": 0.5 * cs.sumsqr(x),
            "g": cs.vertcat(a * (x[0] - x[1]) - a, a * (x[1] - x[2]) - a)}


def _scaled_rows_ipopt(nlp):
    r = ipopt.solve(nlp, dict(x0=np.zeros(3), lbg=0, ubg=0), {"tol": 1e-8})
    return r.status, r.f, r.x


def _scaled_rows_caspar(nlp):
    import caspar_backend as cb

    return cb.from_casadi(nlp, x0=np.zeros(3), lbg=0, ubg=0).solve(print_level=0, tol=1e-8)


@pytest.mark.parametrize("a", [1.0, 1e-2, 1e-4, 1e-6, 1e-8])
def test_scaled_rows_match_ipopt(a):
    nlp = _scaled_rows_problem(a)
    status, f, x = _scaled_rows_ipopt(nlp)
    r = _scaled_rows_caspar(nlp)
    assert status == "Solve_Succeeded" and r.status == "Solve_Succeeded", r.status
    assert abs(r.f - f) <= 1e-6 * max(1.0, abs(f)), (r.f, f)
    np.testing.assert_allclose(r.x, x, atol=1e-6)
