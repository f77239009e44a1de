"""The first block's static term is relative to each column's scale.

K for a problem with a well-scaled variable x1 in one constraint and a badly scaled one x2
(curvature 3.4e-18, in no constraint: hs054's x6, whose objective term is
(x6 - 1e8)^2 / 2.5e17) is

    [ 1   0        1 ]
    [ 0   3.4e-18  0 ]       (x2's Newton step: r_2 / 3.4e-18)
    [ 1   0        0 ]

An absolute static term eps = 1e-9 on x2's pivot makes the factorized pivot ~1e-9:
refinement against K recovers the true pivot only at the rate 3.4e-18 / 1e-9 per step,
and its residual test, dominated by the O(1) rows, passes at once, so the step for x2
came out ~3e-9 times Newton's (hs054 ended at f = -0.9027 against IPOPT's -0.9081).  The
term is now eps min(1, |K_j|_2) per column."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.augmented import AugmentedKKT
from caspar_backend.linsolve.qdldl import QDLDLSolver

pytest.importorskip("qdldl")

TINY = 3.4e-18


def _kkt(eps=1e-9):
    k = AugmentedKKT(nw=2, m=1, hess_rows=[0, 1], hess_cols=[0, 1], jac_rows=[0],
                     jac_cols=[0], linear_solver=QDLDLSolver(), static_regularization=eps)
    k.hess_values[:] = [1.0, TINY]
    k.jac_values[:] = [1.0]
    return k


def _dense(k):
    return np.array([[k.hess_values[0] + k.sigma[0], 0.0, k.jac_values[0]],
                     [0.0, k.hess_values[1] + k.sigma[1], 0.0],
                     [k.jac_values[0], 0.0, 0.0]])


def test_static_term_is_relative_to_the_column():
    k = _kkt()
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
        monkeypatch.setattr(AugmentedKKT, "_primal_static_term", lambda self, eps: eps)
    k = _kkt()
    k.build()
    fact, ok = k.factorize()
    assert ok
    rhs_w, rhs_c = np.array([1.0, 1e-10]), np.array([0.5])
    dw, dy = k.solve(rhs_w, rhs_c)
    ref = np.linalg.solve(_dense(k), np.concatenate([rhs_w, rhs_c]))
    err = abs(dw[1] - ref[1]) / abs(ref[1])
    if relative:
        assert err < 1e-8, (dw, ref)
        np.testing.assert_allclose(np.concatenate([dw, dy]), ref, rtol=1e-8)
    else:
        assert err > 0.5
