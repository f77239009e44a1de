"""Ctrl-C in the front-ends: Pyomo's two interfaces and CasADi's nlpsol report IPOPT's
user stop (see ``tests/solver/test_interrupt.py`` for the protocol): legacy Pyomo
``aborted`` / ``userInterrupt`` with the iterate loaded, ``pyomo.contrib.solver``
``interrupted``, CasADi ``stats()['return_status'] == 'User_Requested_Stop'`` and
``success`` False; the next solve works -- the signal early in a small problem's solve
(inside the compiled kernel) and later (in the general path), answered within
LATENCY_S (100 ms) either way; and in the iteration in which the compiled kernel ejects
the solve to the general path (``ejected_run``): the stop at the kernel's iterate, not a
restart that loses it."""

from __future__ import annotations

import pytest

from tests.solver.test_interrupt import EARLY, LATE, LATENCY_S, ejected_run, interrupted_run

pytestmark = pytest.mark.skipif(__import__("sys").platform == "win32",
                                reason="POSIX signals")
WHEN = pytest.mark.parametrize("when", [EARLY, LATE], ids=["early", "late"])


@WHEN
def test_ctrl_c_pyomo_legacy(when):
    pytest.importorskip("pyomo")
    first, second, latency = interrupted_run("legacy", when)
    assert (first["status"], first["termination"]) == ("aborted", "userInterrupt")
    assert first["finite"] and latency < LATENCY_S, (first, latency)
    assert "requested by user" in first["message"]
    assert (second["status"], second["termination"]) == ("ok", "optimal")


@WHEN
def test_ctrl_c_pyomo_contrib(when):
    pytest.importorskip("pyomo")
    first, second, latency = interrupted_run("contrib", when)
    assert first["termination"] == "interrupted" and first["finite"]
    assert 1 <= first["iterations"] < 10**6 and latency < LATENCY_S, (first, latency)
    assert second["termination"] == "convergenceCriteriaSatisfied"


@WHEN
def test_ctrl_c_casadi(when):
    pytest.importorskip("casadi")
    first, second, latency = interrupted_run("casadi", when)
    assert first["status"] == "User_Requested_Stop" and first["success"] is False
    assert first["finite"] and 1 <= first["iterations"] < 10**6
    assert latency < LATENCY_S, latency
    assert second["status"] == "Solve_Succeeded" and second["success"]


def test_ctrl_c_pyomo_legacy_in_the_iteration_the_kernel_ejects():
    pytest.importorskip("pyomo")
    first, second = ejected_run("legacy")
    assert (first["status"], first["termination"]) == ("aborted", "userInterrupt"), first
    assert first["finite"] and "requested by user" in first["message"]
    assert second["termination"] == "infeasible", second


def test_ctrl_c_pyomo_contrib_in_the_iteration_the_kernel_ejects():
    pytest.importorskip("pyomo")
    first, second = ejected_run("contrib")
    assert first["termination"] == "interrupted" and first["finite"], first
    assert first["iterations"] == first["kernel"][1]
    assert second["termination"] == "locallyInfeasible", second


def test_ctrl_c_casadi_in_the_iteration_the_kernel_ejects():
    pytest.importorskip("casadi")
    first, second = ejected_run("casadi")
    assert first["status"] == "User_Requested_Stop" and first["success"] is False, first
    assert first["finite"] and first["iterations"] == first["kernel"][1]
    assert second["status"] == "Infeasible_Problem_Detected", second


@pytest.mark.parametrize("batch", [False, True])
def test_casadi_lam_p_function_is_built_before_iterating(monkeypatch, batch):
    """lam_p's casadi Function (built once per nlpsol Function) is built when the first
    solve starts, not after its last iteration: a Ctrl-C's User_Requested_Stop does not
    wait for it (0.2 s on the N = 2,000 chain of ``interrupt_child``)."""
    ca = pytest.importorskip("casadi")
    import numpy as np

    import caspar_backend.solver as solver_mod
    from caspar_backend.adapters.casadi import nlpsol_post, parametric
    from caspar_backend.casadi import nlpsol

    events = []
    build = ((nlpsol_post.LagrangianGradients, "_function") if batch
             else (parametric.Parametric, "_gradient_p"))
    original = getattr(*build)

    def recorded_build(self):
        built = (self._fn if batch else self._lam_p_fn) is not None
        out = original(self)
        if not built:
            events.append("build")
        return out

    monkeypatch.setattr(*build, recorded_build)
    if batch:
        from caspar_backend import problem as problem_mod

        run = problem_mod.Problem.solve_batch

        def solve(self, *a, **k):
            events.append("solve")
            return run(self, *a, **k)
        monkeypatch.setattr(problem_mod.Problem, "solve_batch", solve)
    else:
        run = solver_mod.solve_nlp

        def solve(*a, **k):
            events.append("solve")
            return run(*a, **k)
        monkeypatch.setattr(solver_mod, "solve_nlp", solve)
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p")
    S = nlpsol("S", "caspar", {"x": x, "p": p, "f": (x[0] - p) ** 2 + x[1] ** 2,
                               "g": x[0] + x[1]},
               {"print_time": False, "caspar": {"print_level": 0, "compiled_path": "no"}})
    P = np.array([[1.0, 2.0]]) if batch else 1.0
    r = S(x0=0, p=P, lbg=0.5, ubg=2)
    assert events == ["build", "solve"], events
    x0 = np.array(r["x"]).reshape(2, -1)[0]          # lam_p = -d/dp (x0 - p)^2
    np.testing.assert_allclose(np.ravel(r["lam_p"]), 2 * (x0 - np.ravel(P)), atol=1e-7)
