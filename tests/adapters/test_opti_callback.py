"""Opti.callback(fn) with the caspar solver, against casadi's Opti with IPOPT: fn(i)
called once per iteration with the same i sequence, opti.debug.value at each call equal
to IPOPT's iterate; callback() removes it; a re-solve counts from 0 again."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")


def _solve(solver, remove=False, twice=False):
    from caspar_backend.casadi import Opti

    opti = Opti()
    x = opti.variable(2)
    p = opti.parameter()
    opti.minimize((x[0] - p) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2)
    opti.subject_to(x[0] + x[1] >= 1)
    opti.set_value(p, 0.5)
    seen = []
    opti.callback(lambda i: seen.append((i, np.array(opti.debug.value(x)).ravel())))
    if remove:
        opti.callback()
    if solver == "caspar":
        opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    else:
        opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    sol = opti.solve()
    if twice:
        opti.set_value(p, 0.6)
        opti.solve()
    return seen, np.array(sol.value(x)).ravel()


def test_callback_sees_ipopts_iterates():
    ours, x_ours = _solve("caspar")
    theirs, x_theirs = _solve("ipopt")
    assert [i for i, _ in ours] == [i for i, _ in theirs] == list(range(len(theirs)))
    for (_, a), (_, b) in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(x_ours, x_theirs, rtol=1e-9)


def test_callback_removed_and_restarted():
    assert _solve("caspar", remove=True)[0] == []
    seen, _ = _solve("caspar", twice=True)
    idx = [i for i, _ in seen]
    restart = idx.index(0, 1)
    assert idx[:restart] == list(range(restart)) and idx[restart:] == list(
        range(len(idx) - restart))


def test_casadi_opti_replaced_by_caspars(monkeypatch):
    """A script may put caspar's Opti in casadi's place (``casadi.Opti = Opti``) and keep
    its ``casadi.Opti()`` calls: caspar's methods still reach casadi's own (they recursed
    into themselves through the patched name)."""
    from caspar_backend.casadi import Opti

    monkeypatch.setattr(ca, "Opti", Opti)
    opti = ca.Opti()
    x = opti.variable()
    opti.minimize((x - 2) ** 2)
    opti.subject_to(x >= 3)
    opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    sol = opti.solve()
    assert abs(sol.value(x) - 3) < 1e-7 and sol.stats()["return_status"] == "Solve_Succeeded"
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    assert abs(opti.solve().value(x) - 3) < 1e-7
