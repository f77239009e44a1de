"""Opti.copy() and opti.debug.show_infeasibilities() with the caspar solver, as casadi's
Opti with IPOPT gives them (both failed: copy() left the copy without its callback
state, show_infeasibilities read casadi's Python value() as a DM)."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

ca = pytest.importorskip("casadi")


def _opti(solver):
    from caspar_backend.casadi import Opti

    opti = Opti()
    x = opti.variable(2)
    opti.minimize((x[0] - 1) ** 2 + (x[1] - 2) ** 2)
    opti.subject_to(x[0] + x[1] <= 1)
    if solver == "caspar":
        opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    else:
        opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    return opti, x


@pytest.mark.parametrize("callback", [False, True])
def test_a_copy_solves_as_ipopts_copy(callback):
    got = {}
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        seen = []
        if callback:
            opti.callback(lambda i: seen.append(i))
        opti.solve()
        other = opti.copy()
        other.subject_to(x[0] >= 0.5)              # the copy changes, the original not
        got[solver] = (np.ravel(other.solve().value(x)), np.ravel(opti.solve().value(x)),
                       len(seen) > 0)
    for a, b in zip(got["ipopt"], got["caspar"]):
        np.testing.assert_allclose(a, b, atol=1e-7)


def test_show_infeasibilities_lists_the_violated_constraints(monkeypatch):
    out = {}
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        opti.subject_to(x[0] >= 2)                  # with x0 + x1 <= 1 and x1 >= 0 ...
        opti.subject_to(x[1] >= 0)                  # ... infeasible
        with pytest.raises(RuntimeError):
            opti.solve()
        buf = io.StringIO()
        monkeypatch.setattr(sys, "stdout", buf)
        opti.debug.show_infeasibilities(1e-3)
        monkeypatch.undo()
        out[solver] = buf.getvalue()
    assert "Violated constraints" in out["caspar"]
    assert out["caspar"].count("------- i =") >= 1
