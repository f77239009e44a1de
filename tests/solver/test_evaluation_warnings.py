"""An evaluation error at a trial point is reported in the log as IPOPT reports it
("Warning: Cutting back alpha due to evaluation error"), once per cut, naming the
component that failed -- the same number of times as IPOPT on the same problem."""

from __future__ import annotations

import pytest

ca = pytest.importorskip("casadi")

WARNING = "Warning: Cutting back alpha due to evaluation error"


def test_cut_back_reported_as_ipopt(capfd):
    import caspar_backend as cb

    x = ca.SX.sym("x", 1)
    nlp = {"x": x, "f": (x[0] + 1) ** 2, "g": ca.sqrt(x[0])}
    r = cb.from_casadi(nlp, lbg=0, ubg=10).solve(x0=[4.0])
    ours = [ln for ln in capfd.readouterr().out.splitlines() if ln.startswith(WARNING)]
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False})
    S(x0=4.0, lbg=0, ubg=10)
    theirs = [ln for ln in capfd.readouterr().out.splitlines() if ln.startswith(WARNING)]
    assert r.status == "Solve_Succeeded" and S.stats()["success"]
    assert len(ours) == len(theirs) >= 1
    assert all(ln == f"{WARNING}: NaN or Inf in constraint g[0]: sqrt(x)" for ln in ours)


def test_no_output_at_print_level_zero(capfd):
    import caspar_backend as cb

    x = ca.SX.sym("x", 1)
    cb.from_casadi({"x": x, "f": (x[0] + 1) ** 2, "g": ca.sqrt(x[0])}, lbg=0, ubg=10).solve(
        x0=[4.0], print_level=0)
    assert WARNING not in capfd.readouterr().out
