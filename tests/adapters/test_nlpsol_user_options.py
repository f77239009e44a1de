"""nlpsol options that change what a solve does, against casadi's own ``ipopt`` nlpsol in
the same session: ``iteration_callback`` (with ``iteration_callback_step`` and
``iteration_callback_ignore_errors``), ``detect_simple_bounds``, IPOPT's user derivative
Functions ``grad_f``/``jac_g``/``hess_lag``, and the ``calc_*``/``no_nlp_grad`` family.

caspar runs IPOPT's algorithm, so on these small problems its iterates are IPOPT's: the
callback sees the same values at the same iterations (1e-6), stops at the same one, and
detected bounds lead to the same reduced problem (same iteration count).  Where caspar
departs from casadi on purpose (the ``g`` and ``lam_p`` of detected rows, user
derivatives that are not the derivatives) the tests check caspar's value against the
truth instead.
"""

from __future__ import annotations

import warnings

import casadi as ca
import numpy as np
import pytest

from caspar_backend.adapters.casadi.nlpsol_options import NlpsolOptionError
from caspar_backend.casadi import nlpsol
from tests.support.assertions import close
from tests.support.casadi_callbacks import OUTS, Recorder

INF = np.inf


def solvers(nlp, opts=None, **solver):
    """(caspar, ipopt) nlpsol Functions of ``nlp`` with the top-level ``opts`` and the
    solver options ``solver`` (quiet)."""
    opts = dict(opts or {}, print_time=False)
    S = nlpsol("S", "caspar", nlp, {**opts, "caspar": {"print_level": 0, **solver}})
    I = ca.nlpsol("I", "ipopt", nlp, {**opts, "ipopt": {"print_level": 0, "sb": "yes",
                                                         **solver}})
    return S, I


def arr(v):
    return np.array(v, dtype=float).ravel()


def rosen_disc():
    """Rosenbrock in a disc of radius sqrt(p), x_1 >= 0.1: 11 iterations, an active
    bound on the way (lam_x != 0 in the iterates)."""
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p")
    nlp = {"x": x, "p": p, "f": (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2,
           "g": x[0] ** 2 + x[1] ** 2 - p}
    return nlp, dict(x0=[-1, 1.5], p=1, ubg=0, lbx=[-2, 0.1])


def run_with_callback(solver, nlp, args, opts=None, **rec):
    """Solve with a fresh :class:`Recorder`; (result, stats, recorder)."""
    cb = Recorder(nlp["x"].numel(), nlp["g"].numel(), nlp["p"].numel(), **rec)
    S = (nlpsol if solver == "caspar" else ca.nlpsol)(
        "S", solver, nlp, {"iteration_callback": cb, "print_time": False,
                           solver: {"print_level": 0}, **(opts or {})})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = S(**args)
    return r, S.stats(), cb


# ================================================================ iteration_callback
@pytest.mark.parametrize("opts, value, why", [
    ({}, lambda k: 0, "every iterate, K + 1 calls"),
    ({}, lambda k: int(k == 3), "stop at iteration 3"),
    ({}, lambda k: 0.5, "0.5 truncates to 0: no stop"),
    ({"iteration_callback_step": 3}, lambda k: 0, "iterations 0, 3, 6, ..."),
    ({"iteration_callback_step": 2}, lambda k: int(k == 2), "stop at the third call: k = 4"),
])
def test_iteration_callback_matches_ipopt(opts, value, why):
    """Same calls (count and values: x, f, g, lam_x, lam_g, lam_p = 0), same status,
    success, iteration count and result as casadi's ipopt."""
    nlp, args = rosen_disc()
    rc, sc, cc = run_with_callback("caspar", nlp, args, opts, value=value)
    ri, si, ci = run_with_callback("ipopt", nlp, args, opts, value=value)
    for key in ("return_status", "success", "unified_return_status", "iter_count"):
        assert sc[key] == si[key], (why, key, sc[key], si[key])
    assert len(cc.calls) == len(ci.calls) > 1, why
    for k, (a, b) in enumerate(zip(cc.calls, ci.calls)):
        for name in OUTS:
            close(a[name], b[name], 1e-6, msg=f"{why}: call {k}, {name}")
    for name in OUTS:
        close(rc[name], ri[name], 1e-6, msg=f"{why}: {name}")
    step = opts.get("iteration_callback_step", 1)
    if sc["return_status"] == "Solve_Succeeded":
        assert len(cc.calls) == sc["iter_count"] // step + 1
    else:
        assert sc["return_status"] == "User_Requested_Stop" and not sc["success"]
        # the solve ends at the iterate the callback saw last, and returns it
        assert sc["iter_count"] == (len(cc.calls) - 1) * step
        close(rc["x"], cc.calls[-1]["x"], 1e-12)


def test_stop_at_the_first_iterate():
    nlp, args = rosen_disc()
    for solver in ("caspar", "ipopt"):
        r, st, cb = run_with_callback(solver, nlp, args, value=lambda k: 1)
        assert (st["return_status"], st["iter_count"], len(cb.calls)) == \
            ("User_Requested_Stop", 0, 1), solver
        close(r["x"], args["x0"], 0)


def test_callback_calls_are_the_log_lines_also_through_restoration():
    """With restoration phases (IPOPT calls the callback in them too) each call is one
    line of the iteration log, i.e. one entry of stats()['iterations'], in both."""
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "p": ca.SX.sym("p", 0), "f": (x[0] - 3) ** 2 + x[1] ** 2,
           "g": ca.vertcat(x[0] ** 2 - x[1] - 1, x[0] * x[1] - 0.5)}
    args = dict(x0=[0, 0], lbg=0, ubg=0, lbx=[0, -5])
    for solver in ("caspar", "ipopt"):
        _, st, cb = run_with_callback(solver, nlp, args, lam_p=False)
        assert st["return_status"] == "Infeasible_Problem_Detected", solver
        assert len(cb.calls) == len(st["iterations"]["obj"]) > st["iter_count"] + 1, solver
        # x is the original problem's variable also in the restoration iterations
        assert all(c["x"][0] >= -1e-6 for c in cb.calls), solver    # (bounds relax 1e-8)


@pytest.mark.parametrize("ignore", [False, True])
def test_callback_error(ignore):
    """An exception: a warning and User_Requested_Stop at that iteration, or (ignored)
    a warning and the solve goes on -- as casadi."""
    nlp, args = rosen_disc()
    out = {}
    for solver in ("caspar", "ipopt"):
        r, st, cb = run_with_callback(solver, nlp, args,
                                      {"iteration_callback_ignore_errors": ignore},
                                      error_at=2)
        out[solver] = (st["return_status"], st["iter_count"], len(cb.calls))
        close(r["x"], run_with_callback(solver, nlp, args)[0]["x"] if ignore
              else cb.calls[2]["x"], 1e-6)
    assert out["caspar"] == out["ipopt"]
    assert out["caspar"][0] == ("Solve_Succeeded" if ignore else "User_Requested_Stop")
    cb = Recorder(2, 1, 1, error_at=0)
    S = nlpsol("S", "caspar", nlp, {"iteration_callback": cb, "print_time": False,
                                    "caspar": {"print_level": 0}})
    with pytest.warns(RuntimeWarning, match="(?s)intermediate_callback:.*boom"):
        S(**args)


def test_interrupt_in_the_callback_stops_even_when_errors_are_ignored():
    nlp, args = rosen_disc()
    out = {}
    for solver in ("caspar", "ipopt"):
        _, st, cb = run_with_callback(solver, nlp, args,
                                      {"iteration_callback_ignore_errors": True},
                                      error_at=2, error=KeyboardInterrupt())
        out[solver] = (st["return_status"], st["iter_count"], len(cb.calls))
    assert out["caspar"] == out["ipopt"] == ("User_Requested_Stop", 2, 3)


def test_callback_in_batched_calls():
    """B columns and map(B): B single solves, each calling the callback, as casadi."""
    nlp, args = rosen_disc()
    res = {}
    for solver in ("caspar", "ipopt"):
        cb = Recorder(2, 1, 1)
        S = (nlpsol if solver == "caspar" else ca.nlpsol)(
            "S", solver, nlp, {"iteration_callback": cb, "print_time": False,
                               solver: {"print_level": 0}})
        r = S(**{**args, "p": ca.DM([[1, 2, 0.5]])})
        n_cols = len(cb.calls)
        rm = S.map(2)(**{**args, "p": ca.DM([[1, 2]])})
        res[solver] = (arr(r["x"]), arr(rm["x"]), n_cols, len(cb.calls) - n_cols,
                       S.stats()["iter_count"])
    c, i = res["caspar"], res["ipopt"]
    close(c[0], i[0], 1e-6)
    close(c[1], i[1], 1e-6)
    assert c[2:] == i[2:]


def test_callback_signature_is_checked_as_casadi():
    nlp, _ = rosen_disc()
    bad = [(ca.Function("b", [ca.SX.sym("a")], [1]), "input signature must match"),
           (ca.Function("b", [ca.SX.sym("x", 2), ca.SX.sym("f"), ca.SX.sym("g", 3),
                              ca.SX.sym("lx", 2), ca.SX.sym("lg"), ca.SX.sym("lp")], [1]),
            "For argument 'g', callback has shape 3x1 while NLP has 1x1"),
           (ca.Function("b", [ca.SX.sym("x", 2), ca.SX.sym("f"), ca.SX.sym("g"),
                              ca.SX.sym("lx", 2), ca.SX.sym("lg"), ca.SX.sym("lp")],
                        [ca.DM([1, 2])]), "must return a scalar")]
    for fn, match in bad:
        for make, solver in ((nlpsol, "caspar"), (ca.nlpsol, "ipopt")):
            with pytest.raises(RuntimeError, match=match):
                make("S", solver, nlp, {"iteration_callback": fn, "print_time": False})
    with pytest.raises(NlpsolOptionError, match="at least 1"):
        nlpsol("S", "caspar", nlp, {"iteration_callback_step": 0})
    with pytest.raises(NlpsolOptionError, match="expects a casadi Function"):
        nlpsol("S", "caspar", nlp, {"iteration_callback": lambda *a: 0})


# ================================================================ detect_simple_bounds
def mixed_rows():
    """Six rows: 2 x0 + 3 (simple), x0^2 + x1^2 (nonlinear), -x1 (simple, a < 0),
    p x2 (simple, a = p), x1 - p (simple, b depends on p), x0 - 0.5 (simple, the same
    variable as row 0: the tighter side wins per side)."""
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p")
    f = (x[0] - 2) ** 2 + (x[1] + 1) ** 2 + (x[2] - x[0]) ** 2 + x[0] * x[1]
    g = ca.vertcat(2 * x[0] + 3, x[0] ** 2 + x[1] ** 2, -x[1], x[2] * p, x[1] - p,
                   x[0] - 0.5)
    return ({"x": x, "p": p, "f": f, "g": g},
            dict(x0=[0.1, 0.2, 0.3], p=2, lbg=[-10, -INF, -0.5, -1, -INF, -1],
                 ubg=[4, 4, 10, 1, 1, 10]))


def mx_rows():
    """MX, no p: an equality row fixing x0 (a fixed variable), an upper side from
    -3 x1 + 1, a nonsimple row."""
    x = ca.MX.sym("x", 2)
    return ({"x": x, "f": (x[0] - 2) ** 2 + (x[1] + 1) ** 2 + x[0] * x[1],
             "g": ca.vertcat(x[0] - 1, -3 * x[1] + 1, x[0] + x[1])},
            dict(x0=[0.3, 0.2], lbg=[0, -2, -1], ubg=[0, 4, 1]))


def x_bounds_win():
    """The variables' own bounds are tighter than the rows' on some sides."""
    nlp, _ = mx_rows()
    return nlp, dict(x0=[0.3, 0.2], lbg=[-1, -2, -1], ubg=[3, 4, 1], lbx=-0.5, ubx=0.5)


@pytest.mark.parametrize("extra", [{}, {"calc_multipliers": True, "bound_consistency": True}])
@pytest.mark.parametrize("case", [mixed_rows, mx_rows, x_bounds_win])
def test_detect_simple_bounds_matches_ipopt(case, extra):
    """x, f, lam_x, lam_g, status and iteration count as IPOPT's with detection (the
    same reduced problem reached the solver); g is the constraints' value at x (casadi
    3.8 returns a_i x_j - g_i(x0) + x0_j for a simple row, g_i only when a_i = 1 and
    c_i = 0); lam_p is the whole Lagrangian's (IPOPT's without detection: casadi's with
    detection leaves out the simple rows' dependence on p).  calc_lam_x and
    bound_consistency act on the solver's problem before the split, as casadi's."""
    nlp, args = case()
    o = {"detect_simple_bounds": True, **extra}
    S, I = solvers(nlp, o, tol=1e-10)
    r, ri = S(**args), I(**args)
    assert S.stats()["return_status"] == I.stats()["return_status"] == "Solve_Succeeded"
    assert S.stats()["iter_count"] == I.stats()["iter_count"]
    for name in ("x", "f", "lam_x", "lam_g"):
        close(r[name], ri[name], 1e-6, msg=name)
    g_true = ca.Function("g", [nlp["x"]] + ([nlp["p"]] if "p" in nlp else []),
                         [nlp["g"]])(*([r["x"]] + ([args["p"]] if "p" in nlp else [])))
    # (bound_consistency clips x and g separately: g moves by the clipping, ~1e-8)
    close(r["g"], g_true, 1e-6 if extra else 1e-12)
    _, I0 = solvers(nlp, extra, tol=1e-10)
    close(r["lam_p"], I0(**args)["lam_p"], 1e-6)
    # and the solution is the one without detection
    close(r["x"], I0(**args)["x"], 1e-6)


def test_detect_simple_bounds_in_batches_and_with_warm_start():
    nlp, args = mixed_rows()
    S, I = solvers(nlp, {"detect_simple_bounds": True}, tol=1e-10)
    P = [2.0, 1.5, 3.0]
    R = S(**{**args, "p": ca.DM([P])})
    for b, pv in enumerate(P):
        one = S(**{**args, "p": pv})
        for name in OUTS:
            close(np.array(R[name], dtype=float)[:, b], one[name], 1e-10,
                  msg=f"{name} {b}")
    assert S.stats()["return_status"] == "Solve_Succeeded"
    # warm start from the solution (rows with a = 1 map the same in casadi and caspar)
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p")
    nlp = {"x": x, "p": p, "f": (x[0] - 2) ** 2 + (x[1] - p) ** 2,
           "g": ca.vertcat(x[0] + 0.5, x[0] * x[1])}
    args = dict(x0=[0, 0], p=1, lbg=[-1, -1], ubg=[1, 1])
    S, I = solvers(nlp, {"detect_simple_bounds": True}, tol=1e-10,
                   warm_start_init_point="yes")
    r0 = I(**args)
    warm = dict(args, x0=r0["x"], lam_x0=r0["lam_x"], lam_g0=r0["lam_g"], p=1.1)
    r, ri = S(**warm), I(**warm)
    assert S.stats()["iter_count"] == I.stats()["iter_count"]
    for name in ("x", "lam_x", "lam_g"):
        close(r[name], ri[name], 1e-6, msg=name)


def test_detect_simple_bounds_conflicts_and_zero_coefficients():
    """Merged bounds that cross: IPOPT's Invalid_Problem_Definition.  A row a(p) x_j +
    c with a(p) = 0 bounds nothing; violated, caspar reports Infeasible_Problem_Detected
    (casadi 3.8 returns zeros and the previous call's statistics)."""
    nlp, _ = mx_rows()
    args = dict(x0=[0.3, 0.2], lbg=[2, -2, -1], ubg=[3, 4, 1], ubx=[1, 5])
    S, I = solvers(nlp, {"detect_simple_bounds": True})
    S(**args), I(**args)
    assert S.stats()["return_status"] == I.stats()["return_status"] == \
        "Invalid_Problem_Definition"
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p")
    nlp = {"x": x, "p": p, "f": (x[0] - 2) ** 2 + (x[1] + 1) ** 2,
           "g": ca.vertcat(p * x[0] + 1, x[0] + x[1])}
    S, I = solvers(nlp, {"detect_simple_bounds": True})
    args = dict(x0=[0.1, 0.2], p=0, lbg=[0, -1], ubg=[3, 1])
    r, ri = S(**args), I(**args)            # feasible: the row only drops out
    assert S.stats()["return_status"] == I.stats()["return_status"] == "Solve_Succeeded"
    close(r["x"], ri["x"], 1e-6)
    S(**{**args, "lbg": [2, -1]})
    assert S.stats()["return_status"] == "Infeasible_Problem_Detected"
    assert not S.stats()["success"]


def test_detect_simple_bounds_keeps_derivatives():
    """casadi refuses derivatives of a solver with detected bounds; caspar's are the
    ones without detection."""
    nlp, args = mixed_rows()
    P = ca.MX.sym("P")
    jac = []
    for o in ({}, {"detect_simple_bounds": True}):
        S, I = solvers(nlp, o, tol=1e-10)
        out = S(**{**args, "p": P})
        J = ca.Function("J", [P], [ca.jacobian(out["x"], P), ca.jacobian(out["f"], P)])
        jac.append([arr(v) for v in J(args["p"])])
    close(jac[1][0], jac[0][0], 1e-6)
    close(jac[1][1], jac[0][1], 1e-6)
    with pytest.raises(RuntimeError, match="not compatible with get_forward"):
        out = I(**{**args, "p": P})
        ca.Function("J", [P], [ca.jacobian(out["x"], P)])(args["p"])


# ================================================================ grad_f, jac_g, hess_lag
def user_derivatives():
    nlp, args = rosen_disc()
    x, p = nlp["x"], nlp["p"]
    lf, lg = ca.SX.sym("lf"), ca.SX.sym("lg")
    f, g = nlp["f"], nlp["g"]
    exact = {"grad_f": ca.Function("gf", [x, p], [f, ca.gradient(f, x)]),
             "jac_g": ca.Function("jg", [x, p], [g, ca.jacobian(g, x)]),
             "hess_lag": ca.Function("hl", [x, p, lf, lg],
                                     [ca.triu(ca.hessian(lf * f + lg * g, x)[0])])}
    return nlp, args, exact, lf, lg


def test_exact_user_derivatives_are_accepted_silently():
    nlp, args, exact, _, _ = user_derivatives()
    S, I = solvers(nlp, exact)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = S(**args)
    ri = I(**args)
    assert S.stats()["iter_count"] == I.stats()["iter_count"]
    for name in OUTS:
        close(r[name], ri[name], 1e-6, msg=name)


def test_a_differing_gradient_is_reported_and_not_used():
    """A wrong grad_f: a warning (once, at the first solve); caspar solves with its exact
    gradient (the solution without it)."""
    nlp, args, _, _, _ = user_derivatives()
    wrong = ca.Function("g2", [nlp["x"], nlp["p"]], [nlp["f"], 2 * ca.gradient(nlp["f"], nlp["x"])])
    ref = solvers(nlp)[1](**args)
    S, _ = solvers(nlp, {"grad_f": wrong})
    with pytest.warns(UserWarning, match="'grad_f' differs from"):
        r = S(**args)
    close(r["x"], ref["x"], 1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S(**args)                       # checked once


def test_an_inexact_hess_lag_is_iterated_with_as_ipopt():
    """A Hessian that is not the exact one (a constant, a Gauss-Newton Hessian without a
    lam_g input): caspar takes IPOPT's steps with it -- the same iteration count and
    iterates, so the same point within the tolerance -- with no warning; with a
    limited-memory Hessian neither uses it."""
    nlp, args, _, lf, lg = user_derivatives()
    x, p = nlp["x"], nlp["p"]
    const = ca.Function("c", [x, p, lf, lg], [ca.triu(2 * lf * ca.DM.eye(2) + 400 * lf)])
    r_ = ca.vertcat(1 - x[0], 10 * (x[1] - x[0] ** 2))          # f = |r|^2
    Jr = ca.jacobian(r_, x)
    gn = ca.Function("gn", {"x": x, "lam_f": lf, "hess": ca.triu(2 * lf * Jr.T @ Jr)},
                     ["x", "p", "lam_f", "lam_g"], ["hess"])
    assert gn.sparsity_in(3).is_empty(True) and gn.sparsity_in(1).is_empty(True)
    for fn in (const, gn):
        S, I = solvers(nlp, {"hess_lag": fn}, tol=1e-10)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            r = S(**args)
        ri = I(**args)
        assert S.stats()["return_status"] == I.stats()["return_status"]
        assert S.stats()["iter_count"] == I.stats()["iter_count"], fn.name()
        for name in OUTS:
            close(r[name], ri[name], 1e-6, msg=name)
    # the constant Hessian's path is not the exact Hessian's (140 iterations against 12)
    exact = solvers(nlp, tol=1e-10)[0]
    exact(**args)
    S, _ = solvers(nlp, {"hess_lag": const}, tol=1e-10)
    S(**args)
    assert S.stats()["iter_count"] > 5 * exact.stats()["iter_count"]
    # limited memory: hess_lag is not used (caspar's own quasi-Newton iterates)
    S, _ = solvers(nlp, {"hess_lag": const}, hessian_approximation="limited-memory")
    L, _ = solvers(nlp, hessian_approximation="limited-memory")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S(**args)
    L(**args)
    assert S.stats()["iter_count"] == L.stats()["iter_count"]


def test_hess_lag_through_a_deep_chain_is_evaluated_by_casadi_as_ipopt():
    """Single shooting through casadi's mapaccum (an opaque chain) with a Gauss-Newton
    hess_lag, casadi's system-identification example in small: f, grad f by casadi's
    own functions, IPOPT's iterates and answer."""
    from caspar_backend.adapters.casadi.nlp_evaluator import CasadiNlpEvaluator

    y, dy, u = ca.MX.sym("y"), ca.MX.sym("dy"), ca.MX.sym("u")
    prm = ca.MX.sym("prm", 4)
    s = ca.vertcat(y, dy)
    ode = ca.Function("ode", [s, u, prm], [ca.vertcat(dy, (u - prm[3] * y ** 3 - prm[2] * y
                                                          - prm[1] * dy) / prm[0])])
    dt = 0.05
    k1 = ode(s, u, prm)
    k2 = ode(s + dt / 2 * k1, u, prm)
    k3 = ode(s + dt / 2 * k2, u, prm)
    k4 = ode(s + dt * k3, u, prm)
    step = ca.Function("step", [s, u, prm], [s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])
    N = 40
    sim = step.mapaccum("sim", N)
    rng = np.random.default_rng(0)
    u_data = ca.DM(rng.uniform(-2, 2, N))
    truth = ca.DM([1.0, 0.3, 2.0, 0.5])
    y_data = sim(ca.DM([0.1, 0]), u_data.T, ca.repmat(truth, 1, N))[0, :].T
    e = y_data - sim(ca.DM([0.1, 0]), u_data.T, ca.repmat(prm, 1, N))[0, :].T
    nlp = {"x": prm, "f": 0.5 * ca.dot(e, e)}
    sigma = ca.MX.sym("sigma")
    Je = ca.jacobian(e, prm)
    hl = ca.Function("nlp_hess_l", {"x": prm, "lam_f": sigma,
                                    "hess_gamma_x_x": sigma * ca.triu(Je.T @ Je)},
                     ["x", "p", "lam_f", "lam_g"], ["hess_gamma_x_x"])
    S, I = solvers(nlp, {"hess_lag": hl}, tol=1e-10)
    assert S.problem.extended is not None                 # the chain is opaque
    assert isinstance(S._core.casadi_evaluator, CasadiNlpEvaluator)
    x0 = [1.3, 0.2, 1.5, 0.7]
    r, ri = S(x0=x0), I(x0=x0)
    assert S.stats()["return_status"] == I.stats()["return_status"] == "Solve_Succeeded"
    assert S.stats()["iter_count"] == I.stats()["iter_count"]
    close(r["x"], ri["x"], 1e-6)
    close(r["x"], truth, 1e-4)                            # identified (short data)
    close(r["f"], ri["f"], 1e-6, atol=1e-14)


def test_user_derivative_structure_is_checked_as_casadi():
    nlp, _, exact, lf, lg = user_derivatives()
    x, p = nlp["x"], nlp["p"]
    full = ca.Function("h", [x, p, lf, lg], [ca.hessian(lf * nlp["f"] + lg * nlp["g"], x)[0]])
    for make, solver in ((nlpsol, "caspar"), (ca.nlpsol, "ipopt")):
        with pytest.raises(RuntimeError, match="Hessian must be upper triangular"):
            make("S", solver, nlp, {"hess_lag": full, "print_time": False})
        with pytest.raises(RuntimeError):
            make("S", solver, nlp, {"grad_f": ca.Function("g", [x, p], [nlp["f"]]),
                                    "print_time": False})
    with pytest.raises(NlpsolOptionError, match="1 rows and 2 columns"):
        nlpsol("S", "caspar", nlp, {"jac_g": ca.Function("j", [x, p], [nlp["g"], x.T @ x])})


# ================================================================ calc_*, no_nlp_grad
def test_calc_multipliers_and_no_nlp_grad_as_casadi():
    nlp, args = rosen_disc()
    S, I = solvers(nlp, {"calc_multipliers": True, "calc_lam_p": False})
    r, ri = S(**args), I(**args)
    for name in ("lam_x", "lam_p"):
        assert np.all(np.isfinite(arr(ri[name])))
        close(r[name], ri[name], 1e-6, atol=1e-8, msg=name)
    # no_nlp_grad contradicts calc_lam_p (the default, with parameters): casadi raises
    for make, solver in ((nlpsol, "caspar"), (ca.nlpsol, "ipopt")):
        with pytest.raises(RuntimeError, match="'no_nlp_grad' and 'calc_lam_p' inconsistent"):
            make("S", solver, nlp, {"no_nlp_grad": True, "print_time": False})
        with pytest.raises(RuntimeError, match="'no_nlp_grad' and 'calc_lam_x' inconsistent"):
            make("S", solver, nlp, {"no_nlp_grad": True, "calc_lam_p": False,
                                    "calc_lam_x": True, "print_time": False})
    S, I = solvers(nlp, {"no_nlp_grad": True, "calc_lam_p": False})
    r, ri = S(**args), I(**args)
    assert np.isnan(float(r["lam_p"])) and np.isnan(float(ri["lam_p"]))
    close(r["x"], ri["x"], 1e-6)
    # without parameters calc_lam_p is off by itself
    x = nlp["x"]
    S, I = solvers({"x": x, "f": nlp["f"]}, {"no_nlp_grad": True, "calc_f": False})
    close(S(x0=[0, 0])["x"], I(x0=[0, 0])["x"], 1e-6)


def test_callback_sees_the_user_rows_with_detected_bounds():
    """With detect_simple_bounds the callback gets the user's g and lam_g (all rows, the
    detected ones split back), as the result: its last call is the result (casadi 3.8
    passes the solver's shorter g into the user's longer input)."""
    nlp, args = mixed_rows()
    r, st, cb = run_with_callback("caspar", nlp, args, {"detect_simple_bounds": True})
    assert st["return_status"] == "Solve_Succeeded"
    assert len(cb.calls) == st["iter_count"] + 1
    for name in ("x", "f", "g", "lam_x", "lam_g"):
        close(cb.calls[-1][name], r[name], 1e-12, msg=name)
    assert np.all(cb.calls[-1]["lam_p"] == 0)
