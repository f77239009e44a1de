"""The starting point as IPOPT's DefaultIterateInitializer::SetInitialIterates sets it
(issue 23):

    x = push(x0)   (bound_push, bound_frac),
    s = push_s(d(x))   (slack_bound_push, slack_bound_frac),   d(x) = dc_I g_I(x)

with d evaluated at the *pushed* x, once: that evaluation of g is also the first
iterate's (IpCq().trial_d(), cached for curr_c/curr_d).  IPOPT's warm start
(WarmStartIterateInitializer) instead takes s = d(x0) at the user's x0 and pushes x and s
together.

Reference problem: min (x0 - 2)^2 + (x1 - 1)^2 s.t. x0 x1 >= 0.5, x0 + 2 x1 <= 3,
0 <= x <= 5, from x0 = (0, 0) -- on the lower bounds, where d_2 = x0 + 2 x1 = 0 while at
the pushed x (~0.01, ~0.01) it is ~0.03, inside its side.  The slack of row 2 then starts
at ~0.03 (IPOPT, 13 iterations) and not at 0 (the slacks of the unpushed x0: 11
iterations, other iterates).  The three implementations of the interior point (general, compiled kernel,
lockstep batch) start alike and agree bit for bit.
"""

from __future__ import annotations

import re

import casadi as cs
import numpy as np
import pytest

from caspar_backend import from_casadi
from caspar_backend.casadi import nlpsol
from caspar_backend.solver.options import resolve_options
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar, run_ipopt

INF = np.inf


def _bound_start():
    x = cs.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 2) ** 2 + (x[1] - 1) ** 2,
           "g": cs.vertcat(x[0] * x[1], x[0] + 2 * x[1])}
    args = dict(x0=[0.0, 0.0], lbx=[0, 0], ubx=[5, 5], lbg=[0.5, -INF], ubg=[INF, 3])
    return nlp, args


def _rosenbrock(bounded):
    """Rosenbrock with x0^2 + x1^2 <= 1.5 and x0 + x1 = 0.5 from (-1.2, 1); ``bounded``:
    x0 >= -1 (x0 moved by the push)."""
    x = cs.SX.sym("x", 2)
    nlp = {"x": x, "f": 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2,
           "g": cs.vertcat(x[0] ** 2 + x[1] ** 2, x[0] + x[1])}
    args = dict(x0=[-1.2, 1.0], lbg=[-INF, 0.5], ubg=[1.5, 0.5])
    if bounded:
        args.update(lbx=[-1, -10], ubx=[10, 10])
    return nlp, args


def _mixed():
    """Equalities, one- and two-sided inequalities, a free row, bounds x0 sits inside."""
    x = cs.SX.sym("x", 5)
    nlp = {"x": x, "f": cs.sumsqr(x - 1) + x[0] * x[1] * x[4],
           "g": cs.vertcat(x[0] + x[1] ** 2, x[2] * x[3], cs.sin(x[0]) + x[4],
                           x[1] - x[3], x[0] * x[2] * x[4])}
    args = dict(x0=[0.5] * 5, lbx=[-2, 0, -INF, 0.3, -INF], ubx=[2, INF, 1, 0.9, INF],
                lbg=[1, -INF, 0, -1, -INF], ubg=[1, 2, INF, 1, INF])
    return nlp, args


def _on_bounds():
    """x0 on its bounds, an equality and two inequalities depending on both variables."""
    x = cs.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 2) ** 2 + (x[1] - 1) ** 2,
           "g": cs.vertcat(x[0] * x[1], x[0] + 2 * x[1], x[0] - x[1])}
    args = dict(x0=[0.0, 0.0], lbx=[0, 0], ubx=[5, 5], lbg=[0.5, -INF, 1.2],
                ubg=[INF, 3, 1.2])
    return nlp, args


def _equalities_only():
    """An equality constraint only: no slacks, so no d(x0) evaluation to reuse."""
    x = cs.SX.sym("x", 3)
    nlp = {"x": x, "f": cs.sumsqr(x - 1) + x[0] * x[1], "g": x[0] ** 2 + x[1] * x[2]}
    return nlp, dict(x0=[0.5, 0.2, 2.0], lbx=[0, -INF, -INF], ubx=[5, INF, INF],
                     lbg=[1.0], ubg=[1.0])


PROBLEMS = {"equalities_only": _equalities_only, "bound_start": _bound_start, "rosenbrock": lambda: _rosenbrock(False),
            "rosenbrock_bounded": lambda: _rosenbrock(True), "mixed": _mixed,
            "on_bounds": _on_bounds}


def _pair(nlp, compiled="no", **opts):
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
        "print_level": 0, "compiled_path": compiled, **opts}})
    ip = {k: ("yes" if v is True else v) for k, v in opts.items()}
    I = cs.nlpsol("I", "ipopt", nlp, {"print_time": False, "ipopt": {
        "print_level": 0, "sb": "yes", **ip}})
    return S, I


def _vec(v):
    return np.array(v, dtype=float).ravel()


def _slack_nlp(nlp, args, opts=None):
    from caspar_backend.solver.ipm import InteriorPoint, Shared
    from caspar_backend.solver.nlp import EvalCounter, SlackNLP
    from caspar_backend.solver.options import resolve_options

    o = resolve_options(dict(print_level=0, **(opts or {})))
    ev = from_casadi(nlp).evaluator()
    n = len(args["x0"])
    sn = SlackNLP(ev, args.get("lbx", [-INF] * n), args.get("ubx", [INF] * n),
                  args["lbg"], args["ubg"], args["x0"], o, EvalCounter())
    return sn, InteriorPoint(sn, Shared(o, sn.counter, None, 0.0))


# ------------------------------------------------------------------ the start itself
def test_slacks_of_the_pushed_x_one_evaluation():
    """s = push_s(d(x)) at the pushed x; h of the first iterate is h(w) from that one
    constraint evaluation, bit for bit the h a second evaluation would give."""
    from caspar_backend.solver.initial import pushed

    nlp, args = _bound_start()
    sn, ipm = _slack_nlp(nlp, args)
    before = dict(sn.counter.counts)
    ipm.initialize_default(args["x0"])
    after = sn.counter.counts
    assert after["cons"] - before["cons"] == 1 and after["obj"] - before["obj"] == 1
    w = ipm.it.w.copy()
    o = ipm.opts
    np.testing.assert_array_equal(w[:2], pushed(np.zeros(2), sn.wL[:2], sn.wU[:2],
                                                o.bound_push, o.bound_frac))
    assert w[0] > 0.0
    d_pushed = sn.dc[sn.slack_rows] * np.array([w[0] * w[1], w[0] + 2 * w[1]])
    wL, wU = sn.wL[2:], sn.wU[2:]
    s = pushed(d_pushed, wL, wU, o.slack_bound_push, o.slack_bound_frac)
    np.testing.assert_array_equal(w[2:], s)
    s_old = pushed(sn.dc[sn.slack_rows] * np.array([0.0, 0.0]), wL, wU,
                   o.slack_bound_push, o.slack_bound_frac)
    assert w[3] > 0.029 and s_old[1] == 0.0     # the unpushed x0's slack: 0
    h = np.zeros(sn.m)
    sn.h(w, h)
    np.testing.assert_array_equal(ipm.it.h, h)


def test_host_bounds_are_the_slack_problems_bounds_and_read_once():
    """``host_bounds()``: the slack problem's (wL, wU) on the host, the same arrays at
    every call (the slack problem keeps the ones it computed; a restoration problem copies
    its device bounds once)."""
    from caspar_backend.solver.restoration import RestorationNLP

    nlp, args = _bound_start()
    sn, ipm = _slack_nlp(nlp, args)
    wL, wU = sn.host_bounds()
    np.testing.assert_array_equal(wL, sn.wL)
    np.testing.assert_array_equal(wU, sn.wU)
    assert sn.host_bounds()[0] is wL and sn.host_bounds()[1] is wU
    ipm.initialize_default(args["x0"])
    resto = RestorationNLP(sn, ipm.it.w, 0.1, 1.0)
    rL, rU = resto.host_bounds()
    np.testing.assert_array_equal(rL, resto.wL)
    np.testing.assert_array_equal(rU, resto.wU)
    assert resto.host_bounds()[0] is rL


def _iteration_lines(out):
    """(iter, objective, inf_pr) of a log's iteration lines (IPOPT's layout)."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)r?\s+(\S+)\s+(\S+)\s", line)
        if m:
            rows.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
    return rows


@pytest.mark.parametrize("compiled", ["no", "yes"])
def test_iterates_as_ipopt_and_not_as_before(capfd, compiled):
    """The bound_start problem: every iteration's objective and inf_pr in the log, the
    iteration count and x as IPOPT's; the former start (slacks of the unpushed x0, w
    pushed whole) takes another path."""
    nlp, args = _bound_start()
    I = cs.nlpsol("I", "ipopt", nlp, {"print_time": False, "ipopt.sb": "yes"})
    ri = I(**args)
    ipopt = _iteration_lines(capfd.readouterr().out)
    S = nlpsol("S", "caspar", nlp, {"print_time": False,
                                    "caspar": {"compiled_path": compiled}})
    rs = S(**args)
    ours = _iteration_lines(capfd.readouterr().out)
    assert S.stats()["return_status"] == I.stats()["return_status"] == "Solve_Succeeded"
    assert S.stats()["iter_count"] == I.stats()["iter_count"] == 13
    assert [r[0] for r in ours] == [r[0] for r in ipopt] == list(range(14))
    np.testing.assert_allclose([r[1] for r in ours], [r[1] for r in ipopt], rtol=1e-7)
    assert [r[2] for r in ours] == [r[2] for r in ipopt]
    np.testing.assert_allclose(_vec(rs["x"]), _vec(ri["x"]), rtol=1e-9, atol=1e-12)
    # the former order: s = d(x0) at the unpushed x0, then w pushed whole
    sn, ipm = _slack_nlp(nlp, args)
    with np.errstate(all="ignore"):
        ipm.initialize(sn.initial_w(args["x0"]))
        assert ipm.run() == "Solve_Succeeded"
    old = [r.objective for r in ipm.sh.history]
    assert ipm.sh.iter == 11
    assert abs(old[3] - ipopt[3][1]) > 1e-3


@pytest.mark.parametrize("compiled", ["no", "yes"])
@pytest.mark.parametrize("name", list(PROBLEMS))
def test_evaluation_counts_as_ipopts(name, compiled):
    """casadi's n_call_nlp_* counts (g: one evaluation at the start) and the iterations
    equal IPOPT's, on the general path and the compiled kernel."""
    nlp, args = PROBLEMS[name]()
    S, I = _pair(nlp, compiled)
    S(**args)
    I(**args)
    keys = ("iter_count", "n_call_nlp_f", "n_call_nlp_g", "n_call_nlp_grad_f",
            "n_call_nlp_jac_g", "n_call_nlp_hess_l")
    assert {k: S.stats()[k] for k in keys} == {k: I.stats()[k] for k in keys}
    if compiled == "yes":
        assert S.stats()["caspar"]["extra"]["path"] == "compiled"


@pytest.mark.parametrize("compiled", ["no", "yes"])
@pytest.mark.parametrize("name", ["on_bounds", "rosenbrock", "mixed"])
def test_summary_evaluation_lines_as_ipopts(capfd, compiled, name):
    """The final summary's "Number of ... evaluations" lines as IPOPT prints them:
    objective, gradient, equality and inequality constraints and Jacobians, Hessian
    (IPOPT's gradient-based scaling evaluates the gradient and the Jacobian at x0
    outside the counters it prints; caspar's SolveResult.counts and CasADi's
    n_call_nlp_* include them, as casadi's own IPOPT stats do)."""
    nlp, args = PROBLEMS[name]()
    cs.nlpsol("R", "ipopt", nlp, {"print_time": False, "ipopt.sb": "yes"})(**args)
    ipopt = capfd.readouterr().out.splitlines()
    nlpsol("S", "caspar", nlp, {"print_time": False,
                                "caspar": {"compiled_path": compiled}})(**args)
    ours = capfd.readouterr().out.splitlines()
    heads = ["Number of Iterations"] + sorted(
        {s.split("=")[0].strip() for s in ipopt if s.startswith("Number of ")
         and "evaluations" in s})
    assert len(heads) == 8
    for head in heads:
        assert [s for s in ours if s.startswith(head)] == \
            [s for s in ipopt if s.startswith(head)], head


# ------------------------------------------------------------------ the three paths
@pytest.mark.parametrize("name", ["bound_start", "rosenbrock_bounded", "on_bounds"])
def test_general_compiled_and_batch_paths_agree(name, monkeypatch):
    """The general path, the compiled kernel (solve_compiled) and solve_batch on the CPU
    (the kernel and the lockstep interior point) from starts on, outside and inside the
    bounds: the same status, iterations, iterates and x, bit for bit."""
    pytest.importorskip("numba")
    from caspar_backend.batch import solve as batch_solve
    from caspar_backend.compiled import solve_compiled, warmup

    warmup()
    nlp, args = PROBLEMS[name]()
    P = from_casadi(nlp)
    bounds = {k: args[k] for k in ("lbx", "ubx", "lbg", "ubg") if k in args}
    x0 = np.asarray(args["x0"], float)
    X = np.array([x0, x0 + 0.3, x0 - 0.05])
    gen = [P.solve(x0=xb, print_level=0, compiled_path="no", **bounds) for xb in X]
    r = solve_compiled(P, x0, None, print_level=0, **bounds)
    assert r is not None and r.extra["path"] == "compiled"
    e = gen[0]
    assert (r.status, r.iterations) == (e.status, e.iterations)
    assert r.f == e.f
    np.testing.assert_array_equal(r.x, e.x)
    assert [h.objective for h in r.history] == [h.objective for h in e.history]
    assert [h.inf_pr for h in r.history] == [h.inf_pr for h in e.history]
    assert r.counts == e.counts
    for kernel in (True, False):
        monkeypatch.setattr(batch_solve, "KERNEL_ON_CPU", kernel)
        res = P.solve_batch(x0=X, print_level=0, **bounds)
        assert set(res.path) == {"kernel" if kernel else "lockstep"}
        for b, g in enumerate(gen):
            assert (res.status[b], res.iterations[b]) == (g.status, g.iterations)
            np.testing.assert_array_equal(res.x[b], g.x)


def test_warm_start_keeps_slacks_of_the_users_x0():
    """warm_start_init_point: IPOPT's WarmStartIterateInitializer (s = d(x0) at the
    unpushed x0, x and s pushed with the warm_start_* options) -- on the bound_start
    problem, whose x0 lies on its bounds, the same iterations as IPOPT's."""
    nlp, args = _bound_start()
    ws = {"warm_start_init_point": True, "warm_start_bound_push": 1e-2,
          "warm_start_bound_frac": 1e-2, "warm_start_slack_bound_push": 1e-2,
          "warm_start_slack_bound_frac": 1e-2}
    S, I = _pair(nlp, **ws)
    S(**args)
    I(**args)
    ss, si = S.stats(), I.stats()
    assert ss["iter_count"] == si["iter_count"]
    np.testing.assert_allclose(ss["iterations"]["obj"], si["iterations"]["obj"],
                               rtol=1e-8, atol=1e-12)


def _warm_stats(name):
    """(caspar's, IPOPT's) nlpsol stats of problem ``name`` with warm_start_init_point
    and the default pushes."""
    nlp, args = PROBLEMS[name]()
    S, I = _pair(nlp, warm_start_init_point=True)
    S(**args)
    I(**args)
    return S.stats(), I.stats()


@pytest.mark.parametrize("name", ["bound_start", "rosenbrock_bounded", "on_bounds"])
def test_warm_start_default_pushes_are_bound_push_and_bound_frac(name):
    """IPOPT's WarmStartIterateInitializer::InitializeImpl: a warm_start_* push or
    fraction the user does not give is bound_push's / bound_frac's value (1e-2 by
    default), not the warm_start_* option's own default."""
    from caspar_backend.solver.initial import warm_start_pushes
    from caspar_backend.solver.options import resolve_options

    assert warm_start_pushes(resolve_options({})) == (1e-2, 1e-2, 1e-2, 1e-2)
    assert warm_start_pushes(resolve_options({"bound_push": 0.1, "warm_start_bound_frac":
                                              1e-4})) == (0.1, 1e-4, 0.1, 1e-2)
    ss, si = _warm_stats(name)
    assert ss["return_status"] == si["return_status"]
    assert ss["iter_count"] == si["iter_count"]
    np.testing.assert_allclose(ss["iterations"]["obj"], si["iterations"]["obj"],
                               rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["rosenbrock", "mixed", "bound_start", "on_bounds",
                                  "equalities_only"])
def test_warm_start_evaluation_counts_as_ipopts(name):
    """IPOPT's warm start evaluates d at the user's x0; where the push leaves x as it
    was, the first iterate reuses that evaluation (c and d once at one x), else it
    evaluates again at the pushed x: CasADi's n_call_nlp_g and the iterations equal."""
    ss, si = _warm_stats(name)
    assert ss["iter_count"] == si["iter_count"]
    for k in ("n_call_nlp_f", "n_call_nlp_g", "n_call_nlp_grad_f", "n_call_nlp_jac_g",
              "n_call_nlp_hess_l"):
        assert ss[k] == si[k], k


def test_slack_pushes_follow_the_bound_pushes_unless_given():
    """IPOPT's DefaultIterateInitializer: slack_bound_push and slack_bound_frac default to
    bound_push's and bound_frac's values (with bound_push = 0.1 the bank's hs015, hs017
    and hs018 took 16, 16, 14 iterations against IPOPT's 21, 17, 15 while the slacks kept
    0.01)."""
    o = resolve_options({"bound_push": 0.1, "bound_frac": 0.2})
    assert (o.slack_bound_push, o.slack_bound_frac) == (0.1, 0.2)
    o = resolve_options({"bound_push": 0.1, "slack_bound_push": 0.05})
    assert (o.slack_bound_push, o.slack_bound_frac) == (0.05, 0.01)
    p = next(p for p in bank() if p.name == "hs015")
    d = dict(p.build(), options=p.options)
    ref = run_ipopt(d, {"bound_push": 0.1})
    r = run_caspar(d, {"bound_push": 0.1})
    assert (r.status, r.iterations) == (ref["status"], ref["iter"])


@pytest.mark.parametrize("compiled_path", ["no", "yes"])
def test_a_singular_least_squares_system_leaves_y_zero_as_ipopt(compiled_path):
    """At x0 = 0 the Jacobian of (x1^2 + x2^2, x1 + x2) has rank one: IPOPT's
    least-squares multiplier system is singular (MUMPS reports it) and y starts at 0;
    caspar regularized the constraint rows (delta_c = 1e-10) and started from y_d = -1/3
    (inf_du 0.667 at iteration 0).  Now iterations 0 and 1 are IPOPT's to rounding (the
    solves part later, at the degenerate Jacobian: the static-term design of
    docs/kkt-regularization-and-refinement.md)."""
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[1] - x[0] ** 2) ** 2,
           "g": ca.vertcat(x[0] ** 2 + x[1] ** 2, x[0] + x[1])}
    args = dict(x0=[0, 0], lbg=[1, 1], ubg=[1, ca.inf])
    S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0})
    S(**args)
    C = nlpsol("C", "caspar", nlp, {"caspar": {"print_level": 0,
                                              "compiled_path": compiled_path},
                                    "print_time": 0})
    C(**args)
    want, got = S.stats()["iterations"], C.stats()["iterations"]
    # (not inf_pr: CasADi records IPOPT's callback value, the slack form's scaled
    # infeasibility -- 1.01 at iteration 0 --, caspar the original problem's, as both
    # logs print: 1.00)
    for key in ("obj", "inf_du", "d_norm", "alpha_pr"):
        np.testing.assert_allclose(got[key][:2], want[key][:2], rtol=1e-9, err_msg=key)
