"""Ctrl-C in the front-ends: Pyomo's two interfaces and CasADi's nlpsol report IPOPT's
user stop (see ``tests/solver/test_interrupt.py`` for the protocol): legacy Pyomo
``aborted`` / ``userInterrupt`` with the iterate loaded, ``pyomo.contrib.solver``
``interrupted``, CasADi ``stats()['return_status'] == 'User_Requested_Stop'`` and
``success`` False; the next solve works."""

from __future__ import annotations

import pytest

from tests.solver.test_interrupt import LATENCY_S, interrupted_run

pytestmark = pytest.mark.skipif(__import__("sys").platform == "win32",
                                reason="POSIX signals")


def test_ctrl_c_pyomo_legacy():
    pytest.importorskip("pyomo")
    first, second, latency = interrupted_run("legacy")
    assert (first["status"], first["termination"]) == ("aborted", "userInterrupt")
    assert first["finite"] and latency < LATENCY_S, (first, latency)
    assert "requested by user" in first["message"]
    assert (second["status"], second["termination"]) == ("ok", "optimal")


def test_ctrl_c_pyomo_contrib():
    pytest.importorskip("pyomo")
    first, second, latency = interrupted_run("contrib")
    assert first["termination"] == "interrupted" and first["finite"]
    assert 1 <= first["iterations"] < 10**6 and latency < LATENCY_S, (first, latency)
    assert second["termination"] == "convergenceCriteriaSatisfied"


def test_ctrl_c_casadi():
    pytest.importorskip("casadi")
    first, second, latency = interrupted_run("casadi")
    assert first["status"] == "User_Requested_Stop" and first["success"] is False
    assert first["finite"] and 1 <= first["iterations"] < 10**6
    assert latency < LATENCY_S, latency
    assert second["status"] == "Solve_Succeeded" and second["success"]
