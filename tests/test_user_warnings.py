"""Warnings about the user's options name the user's line, once (caspar_backend/
user_warnings.py): the Pyomo front-end and the solve both resolve the options, and
printed from two internal lines the same warning showed twice."""

from __future__ import annotations

import warnings

import pytest

from caspar_backend.solver.options import resolve_options


def test_a_warning_names_the_callers_line():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        resolve_options({"ma27_pivtol": 1e-6})          # this line
    (x,) = w
    assert x.filename == __file__ and "ma27_pivtol" in str(x.message)


def test_pyomo_shows_each_warning_once_at_the_solve_line():
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend.pyomo  # noqa: F401  (registers the 'caspar' solver)

    from tests.support.pyomo_nlp_models import one_variable

    m = one_variable()
    s = pyo.SolverFactory("caspar")
    s.options["linear_solver"] = "ma27"
    s.options["ma27_pivtol"] = 1e-6
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("default")
        s.solve(m)
    ours = [x for x in w if "ma27" in str(x.message)]
    assert len(ours) == 2                      # the two options, one warning each
    assert {x.filename for x in ours} == {__file__}
