"""IPOPT's fixed_variable_treatment against IPOPT 3.14 (casadi's): 'relax_bounds' keeps
the fixed variables with relaxed bounds, and a problem left with fewer free variables than
equalities switches to it (IPOPT's "Too few degrees of freedom ... Trying
fixed_variable_treatment = RELAX_BOUNDS") instead of ending with
Not_Enough_Degrees_Of_Freedom.  Status and iterations as IPOPT's, the solution to the
bound relaxation's size (solver/fixed.py)."""

from __future__ import annotations

import io

import casadi as cs
import numpy as np
import pytest

from caspar_backend.solver.fixed import fixed_variables
from caspar_backend.solver.options import resolve_options
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar, run_ipopt


def _too_few_dof():
    """x2, x3 fixed; three equalities for the two free variables."""
    x = cs.SX.sym("x", 4)
    return dict(x=x, f=cs.sumsqr(x - cs.DM([0.3, 0.1, 1.0, 2.0])) + x[0] * x[1],
                g=cs.vertcat(x[0] + x[1] + x[2], x[0] - x[1] + 0 * x[3],
                             x[0] * x[3] - 2.0 * x[1] + x[2] ** 2, x[0] + x[1]),
                x0=np.array([0.5, 0.2, 1.0, 2.0]), lbx=np.array([-10, -10, 1.0, 2.0]),
                ubx=np.array([10, 10, 1.0, 2.0]), lbg=np.array([2.0, 0.0, 1.0, -np.inf]),
                ubg=np.array([2.0, 0.0, 1.0, 5.0]))


@pytest.mark.parametrize("case", ["too_few_dof", "relax_bounds"])
def test_as_ipopt(case):
    if case == "too_few_dof":
        d, opts = _too_few_dof(), {}
    else:
        p = next(p for p in bank() if p.name == "fixed_variables")
        d, opts = p.build(), {"fixed_variable_treatment": "relax_bounds"}
    ref = run_ipopt(d, opts)
    for path in ("auto", "no"):
        r = run_caspar(d, dict(opts, compiled_path=path))
        assert (r.status, r.iterations) == (ref["status"], ref["iter"]), path
        np.testing.assert_allclose(r.x, np.asarray(ref["x"]).ravel(), atol=1e-7)
        assert abs(r.f - ref["f"]) <= 1e-7 * max(1.0, abs(ref["f"]))


def test_the_switch_is_logged_and_an_all_fixed_problem_keeps_make_parameter():
    d = _too_few_dof()
    out = io.StringIO()
    run_caspar(d, {"print_level": 5, "stream": out})
    assert "Too few degrees of freedom (n_x = 2, n_c = 3)." in out.getvalue()
    assert "Trying fixed_variable_treatment = RELAX_BOUNDS" in out.getvalue()
    o = resolve_options({})
    lb = ub = np.array([1.0, 2.0])
    assert fixed_variables(lb, ub, np.zeros(3), np.zeros(3), o)[2] is False


def test_relaxation_follows_ipopts_index_loop():
    """IPOPT relaxes the fixed variables among the first n_fixed indices by max(1e-8,
    bound_relax_factor) max(1, |b|) (its loop runs over indices, not over the fixed
    variables); the others keep their bounds until the ordinary relaxation."""
    o = resolve_options({"fixed_variable_treatment": "relax_bounds"})
    lb = np.array([-1.0, 3.0, 0.0, 5.0])
    ub = np.array([1.0, 3.0, 4.0, 5.0])
    lo, hi, keep = fixed_variables(lb, ub, np.zeros(0), np.zeros(0), o)
    assert keep
    np.testing.assert_array_equal(lo, [-1.0, 3.0 - 3e-8, 0.0, 5.0])
    np.testing.assert_array_equal(hi, [1.0, 3.0 + 3e-8, 4.0, 5.0])
    assert lb[1] == 3.0                          # the caller's arrays untouched

