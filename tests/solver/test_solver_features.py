"""Options, statuses, output format, NaN handling, limits, L-BFGS and adaptive mu."""

from __future__ import annotations

import io
import math
import re

import casadi as cs
import numpy as np
import pytest

from caspar_backend.errors import DeviceError, OptionError
from caspar_backend.solver import solve_nlp
from caspar_backend.solver.options import OPTIONS, resolve_options
from caspar_backend.solver.status import KINDS, STATUSES
from tests.support.casadi_evaluator import CasadiEvaluator
from tests.support.problem_bank import BANK
from tests.support.solver_harness import run_caspar, run_ipopt

BY_NAME = {p.name: p for p in BANK}


# ------------------------------------------------------------------ options
def test_every_option_has_type_default_doc():
    for name, o in OPTIONS.items():
        assert o.name == name and o.doc and o.type in (int, float, str, bool, object)
        if o.type is not object:
            assert isinstance(o.default, o.type), name
        if o.choices:
            assert o.default in o.choices, name
        if o.type in (int, float):
            assert o.low <= o.default <= o.high, name
    resolve_options({})                      # defaults validate against their own rows


def test_ipopt_defaults():
    o = resolve_options(None)
    assert (o.tol, o.max_iter, o.print_level, o.acceptable_tol, o.acceptable_iter) == \
        (1e-8, 3000, 5, 1e-6, 15)
    assert (o.mu_strategy, o.mu_init, o.bound_push, o.bound_frac, o.bound_relax_factor) == \
        ("monotone", 0.1, 1e-2, 1e-2, 1e-8)
    assert (o.nlp_scaling_method, o.nlp_scaling_max_gradient, o.linear_solver) == \
        ("gradient-based", 100.0, "qdldl")
    assert (o.constr_viol_tol, o.dual_inf_tol, o.compl_inf_tol, o.constr_mult_init_max) == \
        (1e-4, 1.0, 1e-4, 1e3)


@pytest.mark.parametrize("bad, suggestion", [("tol_acceptable", "acceptable_tol"),
                                             ("max_iters", "max_iter"),
                                             ("mu_stratgy", "mu_strategy")])
def test_unknown_option_suggests(bad, suggestion):
    with pytest.raises(OptionError) as e:
        resolve_options({bad: 1})
    assert suggestion in str(e.value) and bad in str(e.value)


@pytest.mark.parametrize("opts", [{"tol": "small"}, {"max_iter": 2.5}, {"print_level": -1},
                                  {"mu_strategy": "fast"}, {"max_iter": True}])
def test_wrong_option_value(opts):
    with pytest.raises(OptionError):
        resolve_options(opts)


def test_device_other_than_cpu_is_a_clear_error():
    d = BY_NAME["hs071"].build()
    with pytest.raises(DeviceError, match="cpu"):
        run_caspar(d, {"device": "cuda"})


# ------------------------------------------------------------------ statuses
REQUIRED = ["Solve_Succeeded", "Solved_To_Acceptable_Level", "Infeasible_Problem_Detected",
            "Search_Direction_Becomes_Too_Small", "Diverging_Iterates",
            "User_Requested_Stop", "Feasible_Point_Found", "Maximum_Iterations_Exceeded",
            "Restoration_Failed", "Error_In_Step_Computation", "Maximum_WallTime_Exceeded",
            "Not_Enough_Degrees_Of_Freedom", "Invalid_Problem_Definition", "Invalid_Option",
            "Invalid_Number_Detected"]


def test_status_table_complete():
    for name in REQUIRED:
        assert name in STATUSES
    for s in STATUSES.values():
        assert isinstance(s.success, bool) and s.kind in KINDS and s.exit_message
    assert {s.name for s in STATUSES.values() if s.success} == {
        "Solve_Succeeded", "Solved_To_Acceptable_Level", "Feasible_Point_Found"}


def test_every_status_the_solver_emits_is_in_the_table():
    import pathlib

    import caspar_backend.solver as pkg

    src = "".join(p.read_text() for p in pathlib.Path(pkg.__file__).parent.glob("*.py"))
    used = set(re.findall(r'"([A-Z][a-z]+(?:_[A-Za-z]+)+)"', src))
    used = {u for u in used if u[0].isupper() and "_" in u and u != "Option"}
    missing = {u for u in used if u not in STATUSES and not u.startswith("Solve_")}
    assert not {m for m in missing if m.endswith(("Detected", "Exceeded", "Failed",
                                                  "Computation", "Iterates", "Freedom",
                                                  "Definition"))}


# ------------------------------------------------------------------ output
def test_iteration_log_and_summary_format():
    d = BY_NAME["hs071"].build()
    buf = io.StringIO()
    r = run_caspar(d, {"print_level": 5, "stream": buf, "print_timing_statistics": True})
    out = buf.getvalue()
    assert ("iter    objective    inf_pr   inf_du lg(mu)  ||d||  lg(rg) alpha_du "
            "alpha_pr  ls") in out
    rows = [l for l in out.splitlines() if re.match(r"^ *\d+[ r] ", l)]
    assert len(rows) == r.iterations + 1
    assert re.match(r"^ +0  +1\.6109693e\+01 ", rows[0])
    assert f"Number of Iterations....: {r.iterations}" in out
    for label in ("Objective", "Dual infeasibility", "Constraint violation",
                  "Complementarity", "Overall NLP error", "(scaled)", "(unscaled)",
                  "Number of objective function evaluations", "Timing statistics",
                  "kkt_factorization"):
        assert label in out
    assert out.rstrip().endswith("EXIT: Optimal Solution Found.")
    phases = ("setup", "function_evaluations", "kkt_assembly", "kkt_factorization",
              "kkt_solve", "other")
    assert set(r.timings) == set(phases) | {"total"}
    assert all(r.timings[k] >= 0.0 for k in phases)
    # the phases partition the wall time of the solve (other is the remainder, >= 0)
    assert abs(sum(r.timings[k] for k in phases) - r.timings["total"]) <= 1e-9
    assert len(r.history) == r.iterations + 1


def test_restoration_iterations_are_marked_r():
    p = BY_NAME["needs_restoration_circle"]
    d = dict(p.build(), options=p.options)
    buf = io.StringIO()
    r = run_caspar(d, {"print_level": 5, "stream": buf})
    assert r.status == "Solve_Succeeded"
    assert re.search(r"^ +\d+r", buf.getvalue(), re.M)


@pytest.mark.parametrize("name, status", [("hs071", "Solve_Succeeded"),
                                          ("rosenbrock", "Error_In_Step_Computation")])
def test_failed_step_computation_falls_back_to_restoration(monkeypatch, name, status):
    """IPOPT's emergency mode (ActivateFallbackMechanism): when the KKT system cannot be
    regularized at iteration 2 of a constrained problem, the restoration phase takes over
    and the solve goes on to the optimum; without constraints (no restoration phase) the
    solve stops with Error_In_Step_Computation, as IPOPT's does."""
    from caspar_backend.solver.ipm import InteriorPoint

    orig = InteriorPoint.compute_direction
    failed = []

    def flaky(self):
        if not self.resto and self.sh.iter == 2 and not failed:
            failed.append(True)
            return None
        return orig(self)

    monkeypatch.setattr(InteriorPoint, "compute_direction", flaky)
    p = BY_NAME[name]
    d = dict(p.build(), options=p.options)
    buf = io.StringIO()
    r = run_caspar(d, {"print_level": 5, "stream": buf})
    assert failed and r.status == status
    if status == "Solve_Succeeded":
        assert re.search(r"^ +\d+r", buf.getvalue(), re.M)      # restoration iterations
        assert r.f == pytest.approx(run_ipopt(d)["f"], rel=1e-6)
    else:
        assert r.iterations == 2


@pytest.mark.parametrize("B", [1e8, 1e10])
def test_slack_lost_to_rounding_at_a_large_bound(B):
    """min x0 + x1^2 s.t. x0 >= B, x0 - x1 <= 3B: the bound is active at the optimum and
    at |x0| = B the slack x0 - B resolves B * eps only, so late in the solve it rounds to
    0 (mu / z ~ 1e-9).  IPOPT corrects such slacks (CalculateSafeSlack, slack_move) and
    converges in 9 / 10 iterations; caspar did the same after the change (before it:
    Restoration_Failed)."""
    x = cs.SX.sym("x", 2)
    d = dict(x=x, f=x[0] + x[1] ** 2, g=x[0] - x[1], x0=[2 * B, 1.0], lbx=[B, -np.inf],
             ubx=[np.inf, np.inf], lbg=[-np.inf], ubg=[3 * B])
    ri = run_ipopt(d, {"tol": 1e-8})
    r = run_caspar(d, {"tol": 1e-8})
    assert ri["status"] == r.status == "Solve_Succeeded"
    assert r.f == pytest.approx(ri["f"], rel=1e-14)
    assert r.iterations == ri["iter"]
    with np.errstate(all="ignore"):     # without the correction the slack reaches 0
        off = run_caspar(d, {"tol": 1e-8, "slack_move": 0.0})
    assert off.status != "Solve_Succeeded"


def test_print_level_zero_is_silent(capsys):
    run_caspar(BY_NAME["hs035"].build(), {"print_level": 0})
    assert capsys.readouterr().out == ""


# ------------------------------------------------------------------ NaN / Inf
def test_invalid_number_at_start_names_the_expression():
    x = cs.SX.sym("x", 2)
    f = cs.log(x[0]) + x[1] ** 2
    ev = CasadiEvaluator(x, f)
    r = solve_nlp(ev, [-np.inf] * 2, [np.inf] * 2, [], [], [-1.0, 1.0],
                  options={"print_level": 0})
    assert r.status == "Invalid_Number_Detected" and not r.success
    assert "log" in r.message


def test_invalid_number_in_constraint_names_it():
    x = cs.SX.sym("x", 2)
    ev = CasadiEvaluator(x, cs.sumsqr(x), cs.vertcat(x[0] + x[1], cs.sqrt(x[0]) - x[1]),
                         con_names=["sum", "root_link"])
    r = solve_nlp(ev, [-np.inf] * 2, [np.inf] * 2, [1, 0], [1, 0], [-4.0, 1.0],
                  options={"print_level": 0})
    assert r.status == "Invalid_Number_Detected"
    assert "root_link" in r.message and "sqrt" in r.message


def test_nan_in_trial_point_is_cut_back():
    # no bound keeps the iterates inside the disc; the full Newton steps leave it
    r = run_caspar(BY_NAME["undefined_outside_log_barrier"].build())
    assert r.status == "Solve_Succeeded"
    assert r.counts["obj"] >= r.iterations


# ------------------------------------------------------------------ limits and inputs
def test_max_iter_and_wall_time():
    d = BY_NAME["chained_rosenbrock_100"].build()
    r = run_caspar(d, {"max_iter": 5})
    assert r.status == "Maximum_Iterations_Exceeded" and r.iterations == 5
    r = run_caspar(d, {"max_wall_time": 1e-9})
    assert r.status == "Maximum_WallTime_Exceeded"


def test_invalid_bounds_and_degrees_of_freedom():
    x = cs.SX.sym("x", 2)
    ev = CasadiEvaluator(x, cs.sumsqr(x), cs.vertcat(x[0], x[1], x[0] + x[1]))
    r = solve_nlp(ev, [1, 0], [0, 1], [0] * 3, [0] * 3, [0, 0], options={"print_level": 0})
    assert r.status == "Invalid_Problem_Definition"
    r = solve_nlp(ev, [-1, -1], [1, 1], [0] * 3, [0] * 3, [0, 0], options={"print_level": 0})
    assert r.status == "Not_Enough_Degrees_Of_Freedom"


def test_warm_start_multipliers_accepted():
    d = BY_NAME["hs071"].build()
    cold = run_caspar(d)
    ev = CasadiEvaluator(d["x"], d["f"], d["g"])
    warm = solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], cold.x,
                     lam_g0=cold.lam_g, lam_x0=cold.lam_x,
                     options={"print_level": 0, "mu_init": 1e-6,
                              "warm_start_init_point": "yes", "warm_start_bound_push": 1e-9,
                              "warm_start_bound_frac": 1e-9,
                              "warm_start_mult_bound_push": 1e-9})
    assert warm.success and abs(warm.f - cold.f) < 1e-7
    assert warm.iterations <= cold.iterations


def test_warm_start_as_ipopt():
    """warm_start_init_point: 'no' ignores lam_g0/lam_x0 (IPOPT does); 'yes' uses them
    with the warm_start_* pushes: same iteration count and multipliers as IPOPT."""
    d = BY_NAME["hs071"].build()
    cold = run_caspar(d)
    ev = CasadiEvaluator(d["x"], d["f"], d["g"])
    x0 = np.asarray(d["x0"], float)
    ignored = solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], x0,
                        lam_g0=cold.lam_g * 7, lam_x0=cold.lam_x * 7,
                        options={"print_level": 0})
    plain = solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], x0,
                      options={"print_level": 0})
    assert ignored.iterations == plain.iterations and ignored.f == plain.f
    ws = {"warm_start_init_point": "yes", "mu_init": 1e-4, "sb": "yes"}
    S = cs.nlpsol("w", "ipopt", {"x": d["x"], "f": d["f"], "g": d["g"]},
                  {"ipopt": dict(ws, print_level=0), "print_time": False})
    ri = S(x0=cold.x, lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"], ubg=d["ubg"],
           lam_g0=cold.lam_g, lam_x0=cold.lam_x)
    rc = solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], cold.x, lam_g0=cold.lam_g,
                   lam_x0=cold.lam_x, options=dict(ws, print_level=0))
    assert rc.success and rc.iterations == S.stats()["iter_count"]
    np.testing.assert_allclose(rc.lam_g, np.asarray(ri["lam_g"]).ravel(), rtol=1e-6)


# ------------------------------------------------------------------ algorithm variants
LBFGS_SET = ["hs071", "hs035", "rosenbrock", "hs076", "needs_restoration_circle",
             "optimal_control_200"]


@pytest.mark.parametrize("name", LBFGS_SET)
def test_limited_memory_vs_ipopt(name):
    d = BY_NAME[name].build()
    opts = {"hessian_approximation": "limited-memory"}
    ri, rc = run_ipopt(d, opts), run_caspar(d, opts)
    assert ri["status"] == rc.status == "Solve_Succeeded"
    assert abs(rc.f - ri["f"]) <= 1e-6 * max(1.0, abs(ri["f"])) + 1e-8
    assert rc.iterations <= 2 * ri["iter"] + 5


@pytest.mark.parametrize("name", ["hs071", "hs035", "hs076", "hs043", "bound_only_quadratic",
                                  "optimal_control_200", "hs019"])
def test_adaptive_mu_vs_ipopt(name):
    d = BY_NAME[name].build()
    opts = {"mu_strategy": "adaptive"}
    ri, rc = run_ipopt(d, opts), run_caspar(d, opts)
    assert rc.success, rc.status
    assert abs(rc.f - ri["f"]) <= 1e-6 * max(1.0, abs(ri["f"])) + 1e-8
    assert rc.iterations <= 2 * ri["iter"] + 5


def test_no_scaling_and_obj_scaling_factor():
    d = BY_NAME["hs071"].build()
    a = run_caspar(d, {"nlp_scaling_method": "none"})
    b = run_caspar(d, {"obj_scaling_factor": 10.0})
    assert a.success and b.success and abs(a.f - b.f) < 1e-7


def test_stationary_infeasible_start_detects_local_infeasibility():
    """x^2 + y^2 = 1, x = y from (0, 0) with f = 0: the start is a stationary point of the
    constraint violation, the Newton step is zero.  IPOPT does not take it as a 'tiny
    step' (violation > 1e-4), the line search fails, the restoration phase converges at
    the same point and reports local infeasibility after 7 iterations."""
    x = cs.SX.sym("x", 2)
    d = dict(x=x, f=cs.SX(0), g=cs.vertcat(x[0] ** 2 + x[1] ** 2, x[0] - x[1]),
             x0=[0.0, 0.0], lbx=[-np.inf] * 2, ubx=[np.inf] * 2, lbg=[1, 0], ubg=[1, 0])
    ri, rc = run_ipopt(d), run_caspar(d)
    assert ri["status"] == rc.status == "Infeasible_Problem_Detected"
    assert rc.iterations <= ri["iter"] + 2
    assert any(r.restoration for r in rc.history)


def test_nlp_error_measures_inequalities_by_bound_violation():
    """E_0 uses IPOPT's curr_nlp_constraint_violation: an inequality inside its bounds
    counts as satisfied even while g - s != 0 (the slack residual belongs to the barrier
    error only)."""
    from caspar_backend.solver.ipm import InteriorPoint, Shared
    from caspar_backend.solver.nlp import EvalCounter, SlackNLP

    x = cs.SX.sym("x", 2)
    ev = CasadiEvaluator(x, cs.sumsqr(x), cs.vertcat(x[0] + x[1], x[0] - x[1]))
    opts = resolve_options({"print_level": 0})
    nlp = SlackNLP(ev, [-np.inf] * 2, [np.inf] * 2, [0.0, 1.0], [2.0, 1.0], [0.5, 0.0],
                   opts, EvalCounter())
    ipm = InteriorPoint(nlp, Shared(opts, nlp.counter, None, 0.0))
    ipm.initialize(nlp.initial_w([0.5, 0.0]))
    ipm.it.w[2] = 1.5                     # slack moved: g - s = -1, g = 0.5 inside [0, 2]
    ipm.it.moved()
    nlp.h(ipm.it.w, ipm.it.h)
    e = ipm.calc.errors()
    assert e["constr"] == pytest.approx(1.0) and e["nlp_constr"] == pytest.approx(0.5)


def test_infeasible_lp_ends_infeasible_or_diverging():
    """min y s.t. y >= x, y <= x - 1 (x, y free; Pyomo's test_results_infeasible, which
    takes IPOPT's answer as infeasible or unbounded).  The Hessian is zero and the
    Jacobian rank one: every unperturbed K is singular.  IPOPT's MUMPS does not see it at
    the start (its first step, unperturbed, is 2e14 long) and IPOPT stops with
    Diverging_Iterates after 37 iterations; caspar's factorization reports the singular
    K, the degeneracy test perturbs it, and the solve ends in a few iterations at the
    point of local infeasibility -- what the model is.  (It once ran to max_iter:
    qdldl lost delta_w below ~1e-10 to cancellation.)"""
    x = cs.SX.sym("x", 2)
    d = dict(x=x, f=x[1], g=cs.vertcat(x[1] - x[0], x[1] - x[0] + 1), x0=[0.0, 0.0],
             lbx=[-np.inf] * 2, ubx=[np.inf] * 2, lbg=[0, -np.inf], ubg=[np.inf, 0])
    ri, rc = run_ipopt(d), run_caspar(d)
    assert ri["status"] == "Diverging_Iterates"
    assert rc.status in ("Infeasible_Problem_Detected", "Diverging_Iterates")
    assert rc.iterations <= 2 * ri["iter"]



def test_unbounded_lp_after_minimize_diverges():
    """Pyomo's test_objective_changes: min 3y s.t. y >= x + 1, y >= -x + 1, then the same
    problem maximized from the minimizer (Pyomo passes the loaded values as x0).  IPOPT
    stops with Diverging_Iterates (Pyomo: unbounded) after 6 iterations; caspar must too,
    and a second solve must not inherit anything from the first.  (caspar takes 39: its
    first delta_w = 0 step is cut by the static regularization of qdldl's x-block.)"""
    x = cs.SX.sym("x", 2)
    g = cs.vertcat(x[1] - x[0], x[1] + x[0])
    base = dict(x=x, g=g, lbx=[-np.inf] * 2, ubx=[np.inf] * 2, lbg=[1, 1],
                ubg=[np.inf, np.inf])
    rmin = run_caspar(dict(base, f=3 * x[1], x0=[0.0, 0.0]))
    assert rmin.status == "Solve_Succeeded" and rmin.f == pytest.approx(3.0, rel=1e-7)
    dmax = dict(base, f=-3 * x[1], x0=list(rmin.x))
    ri = run_ipopt(dmax)
    statuses = {run_caspar(dmax).status for _ in range(2)}
    assert ri["status"] == "Diverging_Iterates" and statuses == {"Diverging_Iterates"}
    assert run_caspar(dmax).iterations <= 50


@pytest.mark.parametrize("name", ["maratos", "hs006"])
def test_accepted_second_order_correction_replaces_the_whole_direction(name, monkeypatch):
    """IPOPT's line search takes the dual step of an accepted second-order correction
    from the corrected direction itself (actual_delta = delta_soc): its dy, the bound-
    multiplier steps of dw_soc and their own fraction-to-boundary length.  Checked on the
    bank problems whose solves accept a correction, which must still match IPOPT."""
    import caspar_backend.solver.linesearch as L
    from caspar_backend.kkt.augmented import AugmentedKKT

    solves, seen = [], []
    orig_solve, orig_accept = AugmentedKKT.solve, L.LineSearch._accept

    def solve(self, rhs_w, rhs_c):
        out = orig_solve(self, rhs_w, rhs_c)
        solves.append(out)
        return out

    def accept(search, d, alpha, alpha_z, wt, f_t, ls, kind, pair):
        if kind in ("F", "H"):
            dw, dy = solves[-1]
            dzL, dzU = search.calc.bound_multiplier_steps(dw)
            assert d.dw is dw and d.dy is dy
            np.testing.assert_array_equal(d.dzL, dzL)
            np.testing.assert_array_equal(d.dzU, dzU)
            assert alpha_z == search.calc.fraction_to_boundary_z(dzL, dzU,
                                                                  search.barrier.tau)
            seen.append(kind)
        return orig_accept(search, d, alpha, alpha_z, wt, f_t, ls, kind, pair)

    monkeypatch.setattr(AugmentedKKT, "solve", solve)
    monkeypatch.setattr(L.LineSearch, "_accept", accept)
    p = next(b for b in BANK if b.name == name)
    d = dict(p.build(), options=p.options)
    r, ref = run_caspar(d), run_ipopt(d)
    assert seen, "no second-order correction was accepted"
    assert r.status == ref["status"] and r.iterations == ref["iter"]
    assert r.f == pytest.approx(ref["f"], rel=1e-8, abs=1e-10)
