"""Iterative refinement's contraction (caspar_backend/kkt/refinement.py) and the solver's
answer to a slow one (``refinement_contraction_max``).

Refinement against K with a factorization of K + E contracts the error by about
``E / (d + E)`` in an eigendirection of K with eigenvalue d.  Where d lies below E the
residual test (relative to ``||x||``) can pass while that direction is still far off;
the last step's residual contraction shows it.
"""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt.refinement import refine


def _diag_refine(d, eps, b):
    K, KE = np.asarray(d, float), np.asarray(d, float) + eps
    x = b / KE
    def correct(r, x):
        x += r / KE

    ratio, rho = refine(np, b, x, lambda v: b - K * v, correct,
                        max_steps=10, ratio_max=1e-10, regularized=True)
    return x, ratio, rho


def test_slow_contraction_is_reported_and_means_an_inaccurate_solution():
    """K = diag(1, 1e-10), E = 1e-9: the weak direction contracts by 0.91 per step.  The
    ratio test passes after 7 corrections (x ~ 5e6 in its denominator) with that entry
    half of K^{-1} b's; the contraction returned is that 0.91.  With E = 1e-13 the first
    correction gives K^{-1} b to 1e-6 (accepted at the first read: no contraction)."""
    b = np.array([1e3, 1e-3])
    exact = b / np.array([1.0, 1e-10])
    x, ratio, rho = _diag_refine([1.0, 1e-10], 1e-9, b)
    assert ratio <= 1e-10
    assert rho == pytest.approx(1e-9 / 1.1e-9, rel=1e-3)
    assert abs(x[1] - exact[1]) > 0.3 * exact[1]
    x, ratio, rho = _diag_refine([1.0, 1e-10], 1e-13, b)
    assert ratio <= 1e-10 and rho < 2e-3
    assert x[1] == pytest.approx(exact[1], rel=1e-6)


def test_contraction_unmeasured_with_one_read():
    """A solve accepted at its first residual read has no contraction (0.0)."""
    b = np.array([1.0, 2.0])
    _, ratio, rho = _diag_refine([1.0, 2.0], 1e-9, b)
    assert ratio <= 1e-10 and rho == 0.0


@pytest.mark.slow
def test_collocation_30000_follows_ipopt():
    """The collocation OCP with 30,000 intervals (n = 270,002): at eps = 1e-9 the first
    refinement converges at a contraction of ~0.12 and the first step's objective came
    out 3.3143 against IPOPT's 3.3241; the smaller static term it now triggers gives
    IPOPT's iterations and objective (both 10 iterations, f equal to 1e-9 at tol 1e-6)."""
    ca = pytest.importorskip("casadi")
    import caspar_backend as cb
    from caspar_backend.adapters.casadi.models import vanderpol_collocation

    nlp, args = vanderpol_collocation(30000)
    S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.tol": 1e-6, "ipopt.print_level": 0,
                                      "print_time": 0})
    ref = S(**args)
    assert S.stats()["return_status"] == "Solve_Succeeded"
    prob = cb.from_casadi(nlp, **args)
    r = prob.solve(device="cpu", tol=1e-6, print_level=0)
    assert r.status == "Solve_Succeeded"
    assert r.iterations == S.stats()["iter_count"]
    assert r.f == pytest.approx(float(ref["f"]), rel=1e-9)
    one = prob.solve(device="cpu", tol=1e-6, print_level=0, max_iter=1)
    off = prob.solve(device="cpu", tol=1e-6, print_level=0, max_iter=1,
                     refinement_contraction_max=1.0)
    assert one.f == pytest.approx(3.3240624, rel=1e-6)
    assert abs(off.f - 3.3240624) > 1e-3
