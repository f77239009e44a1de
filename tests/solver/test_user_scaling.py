"""nlp_scaling_method = 'user-scaling' (caspar_backend/solver/user_scaling.py) in
solve_nlp, against IPOPT on the scaled problem written out by hand
(tests/support/scaled_reference.py): same status, same iteration count, the same
solution mapped back to the user's space."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.errors import OptionError
from caspar_backend.solver import solve_nlp
from tests.support.problem_bank import BANK
from tests.support.scaled_reference import ipopt_on_scaled
from tests.support.solver_harness import make_evaluator


def factors(k, size, lo=0.05, hi=20.0):
    """Deterministic factors spanning ``[lo, hi]`` on a log scale, one of them <= 0
    (which means 1.0) where there are several."""
    v = np.exp(np.linspace(np.log(lo), np.log(hi), size + k)[k:])[::-1].copy()
    if size > 2:
        v[1] = -3.0
    return v


def same_path(r, ref, obj):
    """caspar's iterates' objectives (the user's f, as IPOPT logs them) times df are
    IPOPT's on the scaled problem (whose f is f~)."""
    np.testing.assert_allclose([obj * h.objective for h in r.history],
                               ref.stats["iterations"]["obj"], rtol=1e-7)


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
    same_path(r, ref, obj)
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


def test_compiled_path_and_batch_lockstep_leave_user_scaling_alone():
    """The kernels and the lockstep batch take no user factors: 'user-scaling' sends a
    solve to the general path and a batch to single solves; the other methods stay."""
    from caspar_backend.batch.solve import _sequential_reason
    from caspar_backend.compiled.options import resolve
    from caspar_backend.solver.options import resolve_options

    for method, routed in (("user-scaling", True), ("none", False),
                           ("gradient-based", False)):
        given = dict(nlp_scaling_method=method)
        assert bool(resolve(given, clocked=True)[1]) == routed
        assert bool(resolve(given, clocked=True, started=True)[1]) == routed
        assert bool(_sequential_reason(resolve_options(given))) == routed


@pytest.mark.parametrize("name", ["hs071", "hs076"])
def test_warm_start_follows_ipopt(name):
    """IPOPT's warm start with user scaling: y~0 = df lam_g0 / dc, and the bound
    multipliers multiplied by dx (OrigIpoptNLP::GetStartingPoint scales z as it scales
    x) and df."""
    d = _case(name).build()
    n, m = d["x"].numel(), len(d["lbg"])
    ev = make_evaluator(d)
    args = (d["lbx"], d["ubx"], d["lbg"], d["ubg"])
    first = solve_nlp(ev, *args, d["x0"], options=dict(print_level=0))
    x0 = first.x * 1.01 + 0.01
    lam_x0, lam_g0 = first.lam_x * 1.1 - 0.01, first.lam_g * 0.9
    obj, dx, dc = 2.5, factors(0, n, 0.3, 4.0), factors(1, m, 0.5, 3.0)
    dx_eff, dc_eff = np.where(dx > 0, dx, 1.0), np.where(dc > 0, dc, 1.0)
    warm = dict(warm_start_init_point=True, mu_init=1e-4)
    r = solve_nlp(ev, *args, x0, lam_x0=lam_x0, lam_g0=lam_g0,
                  options=dict(print_level=0, nlp_scaling_method="user-scaling", **warm),
                  user_scaling=(obj, dx, dc))
    ref, x, f, _, _ = ipopt_on_scaled(
        dict(d, x0=x0), obj, dx_eff, dc_eff, warm,
        start=dict(lam_x0=obj * dx_eff * lam_x0, lam_g0=obj * lam_g0 / dc_eff))
    assert r.status == ref.status
    assert r.iterations == ref.iterations
    same_path(r, ref, obj)
    np.testing.assert_allclose(r.x, x, rtol=1e-8, atol=1e-9)
