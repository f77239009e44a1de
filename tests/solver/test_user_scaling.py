"""nlp_scaling_method = 'user-scaling' (caspar_backend/solver/user_scaling.py).

IPOPT's user scaling solves ``min df f(x~/dx) s.t. dc lbg <= dc g(x~/dx) <= dc ubg``
with ``x~ = dx x``, the bounds relaxed by bound_relax_factor in the user's space and
then scaled.  The reference is IPOPT (CasADi's, no scaling of its own) on that problem
written out by hand: the bounds relaxed and scaled here, IPOPT's own relaxation off.
Same status, same iteration count, the same solution mapped back to the user's space."""

from __future__ import annotations

import casadi as cs
import numpy as np
import pytest

from caspar_backend.errors import OptionError
from caspar_backend.solver import solve_nlp
from tests.support import ipopt
from tests.support.problem_bank import BANK
from tests.support.solver_harness import make_evaluator

BRF, CVT = 1e-8, 1e-4          # IPOPT's bound_relax_factor and constr_viol_tol


def _relaxed(b, sign):
    """IPOPT's relax_bounds: ``b + sign min(constr_viol_tol, brf max(1, |b|))``."""
    b = np.asarray(b, float)
    fin = np.isfinite(b)
    step = np.minimum(CVT, BRF * np.maximum(1.0, np.abs(np.where(fin, b, 0.0))))
    return np.where(fin, b + sign * step, b)


def factors(k, size, lo=0.05, hi=20.0):
    """Deterministic factors spanning ``[lo, hi]`` on a log scale, one of them <= 0
    (which means 1.0) where there are several."""
    v = np.exp(np.linspace(np.log(lo), np.log(hi), size + k) [k:])[::-1].copy()
    if size > 2:
        v[1] = -3.0
    return v


def ipopt_on_scaled(d, obj, dx, dc, options=None):
    """IPOPT (nlp_scaling_method none) on the user-scaled problem written out, its
    answer mapped back to the user's space: (run, x, f, lam_x, lam_g)."""
    n = d["x"].numel()
    xs = cs.SX.sym("xs", n)
    x = xs / cs.DM(dx)
    f = cs.substitute(d["f"], d["x"], x)
    nlp = {"x": xs, "f": obj * f}
    eq = d["lbg"] == d["ubg"]
    args = dict(x0=dx * d["x0"], lbx=dx * _relaxed(d["lbx"], -1.0),
                ubx=dx * _relaxed(d["ubx"], 1.0))
    if d["g"] is not None:
        nlp["g"] = cs.DM(dc) * cs.substitute(cs.vec(d["g"]), d["x"], x)
        args["lbg"] = dc * np.where(eq, d["lbg"], _relaxed(d["lbg"], -1.0))
        args["ubg"] = dc * np.where(eq, d["ubg"], _relaxed(d["ubg"], 1.0))
    opts = dict(nlp_scaling_method="none", bound_relax_factor=0.0, **(options or {}))
    r = ipopt.solve(nlp, args, opts)
    return (r, r.x / dx, r.f / obj, r.lam_x * dx / obj,
            r.lam_g * dc / obj if d["g"] is not None else r.lam_g)


def _case(name):
    return next(p for p in BANK if p.name == name)


CASES = ["hs071", "hs076", "hs035", "hs043", "hs015", "hs065"]


@pytest.mark.parametrize("name", CASES)
def test_user_scaling_follows_ipopt_on_the_scaled_problem(name):
    d = _case(name).build()
    n, m = d["x"].numel(), len(d["lbg"])
    obj = 0.37
    dx, dc = factors(0, n), factors(1, m, 0.2, 30.0)
    r = solve_nlp(make_evaluator(d), d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"],
                  options=dict(print_level=0, nlp_scaling_method="user-scaling"),
                  user_scaling=(obj, dx, dc))
    dx_eff, dc_eff = np.where(dx > 0, dx, 1.0), np.where(dc > 0, dc, 1.0)
    ref, x, f, lam_x, lam_g = ipopt_on_scaled(d, obj, dx_eff, dc_eff)
    assert r.status == ref.status
    assert r.iterations == ref.iterations
    np.testing.assert_allclose(r.x, x, rtol=1e-8, atol=1e-9)
    assert r.f == pytest.approx(f, rel=1e-8, abs=1e-10)
    np.testing.assert_allclose(r.lam_x, lam_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(r.lam_g, lam_g, rtol=1e-6, atol=1e-8)


def test_scaling_changes_the_iterates_not_the_solution():
    """The factors matter (another iteration count than without) and the solution is
    the unscaled problem's."""
    d = _case("hs071").build()
    ev = make_evaluator(d)
    args = (d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"])
    plain = solve_nlp(ev, *args, options=dict(print_level=0, nlp_scaling_method="none"))
    scaled = solve_nlp(ev, *args, options=dict(print_level=0,
                                               nlp_scaling_method="user-scaling"),
                       user_scaling=(50.0, [0.01, 10, 3, 0.2], [40.0, 0.01]))
    assert scaled.success and plain.success
    assert [h.objective for h in scaled.history] != [h.objective for h in plain.history]
    np.testing.assert_allclose(scaled.x, plain.x, rtol=1e-7)
    np.testing.assert_allclose(scaled.lam_g, plain.lam_g, rtol=1e-5)


@pytest.mark.parametrize("given", [None, (1.0, None, None)])
def test_user_scaling_without_factors_is_none(given):
    d = _case("hs071").build()
    ev = make_evaluator(d)
    args = (d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"])
    none = solve_nlp(ev, *args, options=dict(print_level=0, nlp_scaling_method="none"))
    user = solve_nlp(ev, *args, options=dict(print_level=0,
                                             nlp_scaling_method="user-scaling"),
                     user_scaling=given)
    assert user.iterations == none.iterations
    np.testing.assert_array_equal(user.x, none.x)
    np.testing.assert_array_equal(user.lam_x, none.lam_x)
    np.testing.assert_array_equal(user.lam_g, none.lam_g)


def test_factors_are_ignored_by_other_methods():
    d = _case("hs071").build()
    ev = make_evaluator(d)
    args = (d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"])
    ref = solve_nlp(ev, *args, options=dict(print_level=0))
    r = solve_nlp(ev, *args, options=dict(print_level=0), user_scaling=(3.0, [2.0] * 4,
                                                                         None))
    assert r.iterations == ref.iterations
    np.testing.assert_array_equal(r.x, ref.x)


def test_summary_prints_scaled_and_unscaled_values():
    import io

    d = _case("hs071").build()
    buf = io.StringIO()
    r = solve_nlp(make_evaluator(d), d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"],
                  options=dict(nlp_scaling_method="user-scaling", stream=buf),
                  user_scaling=(4.0, [1.0, 2.0, 0.5, 1.0], None))
    line = next(ln for ln in buf.getvalue().splitlines() if ln.startswith("Objective."))
    scaled, unscaled = (float(v) for v in line.split(":")[1].split())
    assert unscaled == pytest.approx(r.f, rel=1e-12)
    assert scaled == pytest.approx(4.0 * r.f, rel=1e-12)


def test_bad_factors_are_refused():
    d = _case("hs071").build()
    ev = make_evaluator(d)
    args = (d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"])
    opts = dict(print_level=0, nlp_scaling_method="user-scaling")
    with pytest.raises(OptionError):
        solve_nlp(ev, *args, options=opts, user_scaling=(1.0, [1.0] * 3, None))
    with pytest.raises(OptionError):
        solve_nlp(ev, *args, options=opts, user_scaling=(0.0, None, None))
    with pytest.raises(OptionError):
        solve_nlp(ev, *args, options=opts, user_scaling=(1.0, [1, 1, np.inf, 1], None))
