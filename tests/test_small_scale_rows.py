"""Constraint rows of a small scale: IPOPT (MUMPS, no static term) solves
min 1/2 |x|^2  s.t.  a (x1 - x2) = a,  a (x2 - x3) = a  exactly in one Newton step for any
a > 0.  With a uniform static regularization of the non-pivoting LDL^T (eps = 1e-9 on
the constraint block, refined away against K) caspar stopped at x = 0.99993 (a = 1e-4,
Solve_Succeeded) and 1.6e-4 (a = 1e-6, Solved_To_Acceptable_Level): eps dominated the
constraint pivots ~a^2 and the inexact steps met the (absolute) stopping test away from
the solution (1, 0, -1).  The static term is now scaled by each row's squared norm."""

from __future__ import annotations

import numpy as np
import pytest

cs = pytest.importorskip("casadi")


def _problem(a):
    x = cs.SX.sym("x", 3)
    return {"x": x, "f": 0.5 * cs.sumsqr(x),
            "g": cs.vertcat(a * (x[0] - x[1]) - a, a * (x[1] - x[2]) - a)}


def _ipopt(nlp):
    S = cs.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": False,
                                      "ipopt.tol": 1e-8})
    r = S(x0=np.zeros(3), lbg=0, ubg=0)
    return S.stats()["return_status"], float(r["f"]), np.asarray(r["x"]).ravel()


def _caspar(nlp):
    import caspar_backend as cb

    return cb.from_casadi(nlp, x0=np.zeros(3), lbg=0, ubg=0).solve(print_level=0, tol=1e-8)


@pytest.mark.parametrize("a", [1.0, 1e-2, 1e-4, 1e-6, 1e-8])
def test_scaled_rows_match_ipopt(a):
    nlp = _problem(a)
    status, f, x = _ipopt(nlp)
    r = _caspar(nlp)
    assert status == "Solve_Succeeded" and r.status == "Solve_Succeeded", r.status
    assert abs(r.f - f) <= 1e-6 * max(1.0, abs(f)), (r.f, f)
    np.testing.assert_allclose(r.x, x, atol=1e-6)
