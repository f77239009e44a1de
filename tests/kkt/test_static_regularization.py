"""The static term of a constraint row with a slack is bounded by the slack's pivot.

K for  min h/2 x^2  s.t.  g(x) = a x - s = 0,  s >= 0  with the slack at its bound
(barrier term Sigma_s = 1e12) and x at one too (H = h + Sigma_x = 1e12) is

    [ H   0   a ]
    [ 0   S  -1 ]       whose constraint pivot is  -(a^2 / H + 1 / S) ~ -2e-12.
    [ a  -1   0 ]

A static term eps = 1e-6 on that row replaced the pivot by ~-1e-6: refinement against K
then diverges (residual ratio ~1), the step ignores the row, and an active inequality
stays violated (case9241_pegase stalled at a primal infeasibility of 6e-6 this way).  The
row's term is now at most kappa = 1e-2 of the part of its pivot that its private columns
(the slack) give, and refinement recovers K's solution; the test also runs with the
bound switched off to show that it is what makes the difference."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.linsolve.qdldl import QDLDLSolver

pytest.importorskip("qdldl")


def _kkt(two_rows=False, big=1e12, eps=1e-6):
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


def _dense(k, rows, cols):
    H = np.diag(k.sigma + k.delta_w)
    H[0, 0] += k.hess_values[0]
    A = np.zeros((k.m, k.nw))
    A[rows, cols] = k.jac_values
    return np.block([[H, A.T], [A, -k.delta_c * np.eye(k.m)]])


def test_private_columns_found():
    k, _, _ = _kkt(two_rows=True)
    assert k._priv_col.tolist() == [1]          # the slack; x is shared by both rows
    assert np.isinf(k._priv_none[1]) and k._priv_none[0] == 0.0


def test_static_term_of_a_slack_row_is_bounded_by_its_pivot():
    k, _, _ = _kkt(two_rows=True)
    k.build()
    kappa, eps = k.PRIVATE_PIVOT_FRACTION, k.static_regularization
    # row 0: min(eps min(1, |A_0|^2), kappa * 1 / Sigma_s); row 1: eps |A_1|^2
    np.testing.assert_allclose(-k._dstat[3:], [kappa * 1e-12, eps * 2e-6], rtol=1e-12)


@pytest.mark.parametrize("bounded", [True, False])
def test_refinement_recovers_K_solution(bounded, monkeypatch):
    if not bounded:
        monkeypatch.setattr(AugmentedKKT, "PRIVATE_PIVOT_FRACTION", 1e300)
    k, rows, cols = _kkt()
    k.build()
    fact, ok = k.factorize()
    assert ok
    rhs_w, rhs_c = np.array([1.0, 2.0]), np.array([3e-6])
    dw, dy = k.solve(rhs_w, rhs_c)
    # K is far too ill-conditioned (~1e24) for a reference solution; what matters is
    # whether the step satisfies the linearized row  dx - ds = rhs_c  (judged with the
    # dense K, independently of the KKT class): to the precision the 1e12 barrier terms
    # leave (x and s are found from 1e12 x + dy = 1 by cancellation: ~1e-4 relative)
    K, b, z = _dense(k, rows, cols), np.concatenate([rhs_w, rhs_c]), np.concatenate([dw, dy])
    row_err = abs((K @ z - b)[2]) / abs(rhs_c[0])
    if bounded:
        assert k.last_residual_ratio <= 1e-10 and row_err <= 1e-3, \
            (k.last_residual_ratio, row_err)
    else:   # the unbounded eps = 1e-6 term: the step ignores the row
        assert k.last_residual_ratio > 1e-10 and row_err > 0.5, (k.last_residual_ratio, row_err)
