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


def test_a_copy_does_not_carry_the_callback_as_casadis_copy():
    """casadi's optistack test_callback: a copy's solve calls no callback."""
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        seen = []
        opti.callback(lambda i: seen.append(i))
        opti.solve()
        assert seen, solver
        seen.clear()
        opti.copy().solve()
        assert seen == [], solver
        opti.solve()                                # the original keeps it
        assert seen, solver


def test_the_solution_object_as_casadis():
    """sol.opti is a property (nx, ng, np, debug); str(sol) prints the problem."""
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        sol = opti.solve()
        assert (sol.opti.nx, sol.opti.ng, sol.opti.np) == (2, 1, 0), solver
        assert "variables" in str(sol) and "variables" in str(opti.debug), solver


def test_the_solvers_nlp_functions_are_ipopts():
    """debug.casadi_solver.get_function(name): the NLP's functions with IPOPT's names,
    signatures and values (casadi's optistack test_structure)."""
    fns = {}
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        opti.solve()
        S = opti.debug.casadi_solver
        fns[solver] = (S, sorted(S.get_function()))
    assert fns["ipopt"][1] == fns["caspar"][1]
    point = {"x": [0.3, -0.7], "p": [], "lam_f": 2.0, "lam_g": [0.5]}
    for name in fns["ipopt"][1]:
        a, b = (fns[s][0].get_function(name) for s in ("ipopt", "caspar"))
        assert a.name_in() == b.name_in() and a.name_out() == b.name_out(), name
        args = {k: point[k] for k in a.name_in()}
        ra, rb = a.call(args), b.call(args)
        for k in a.name_out():
            assert ra[k].sparsity() == rb[k].sparsity(), (name, k)
            np.testing.assert_allclose(np.asarray(ra[k].full()), np.asarray(rb[k].full()),
                                       rtol=1e-14, atol=1e-14)
    with pytest.raises(RuntimeError, match="nlp_hess_l"):
        fns["caspar"][0].get_function("nlp_nope")


def test_a_semidefinite_constraint_raises_casadis_error():
    for solver in ("ipopt", "caspar"):
        opti, _ = _opti(solver)
        X = opti.variable(3, 3)
        opti.subject_to(X >= 0)
        with pytest.raises(RuntimeError, match="Psd constraints not implemented yet"):
            opti.solve()


def test_to_function_refuses_a_symbol_of_another_opti():
    from caspar_backend.casadi import Opti

    other = Opti().variable()
    for solver in ("ipopt", "caspar"):
        opti, x = _opti(solver)
        with pytest.raises(RuntimeError, match="belonging to a different instance"):
            opti.to_function("F", [other], [x])
