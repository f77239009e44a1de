"""caspar's nlpsol Function on B instances at once: B-column calls (casadi's npar rule)
and ``S.map(B)`` reach one :meth:`Problem.solve_batch` call.

* every instance's outputs equal the single call with that column (1e-10), and every
  result has the shape casadi's ipopt nlpsol gives for the same call;
* shared and per-instance inputs mixed as casadi repeats them; calls casadi refuses are
  refused the same way;
* a spy on ``Problem.solve_batch`` proves one batched solve per evaluation (numeric,
  symbolic, mapped, with reductions);
* derivatives through ``map(B)`` equal those through casadi's own map of the Function;
* ``stats()`` after a batch; bad input named with its instance; ``error_on_fail``.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from caspar_backend.casadi import NlpsolFailure, nlpsol
from caspar_backend.errors import ModelError
from tests.support.assertions import close

QC = {"caspar": {"print_level": 0}, "print_time": False}
QI = {"ipopt": {"print_level": 0, "sb": "yes"}, "print_time": False}
OUT = ("x", "f", "g", "lam_x", "lam_g", "lam_p")
B = 4


def problem():
    """A convex parametric NLP whose instances have different active sets: x in R^3,
    p in R^2, a linear and a quadratic constraint, box bounds."""
    x, p = ca.SX.sym("x", 3), ca.SX.sym("p", 2)
    f = (x[0] - p[0]) ** 2 + (x[1] - p[1]) ** 2 + x[2] ** 2 + 0.5 * x[0] * x[2]
    g = ca.vertcat(x[0] + x[1] + x[2], x[0] ** 2 + x[1] ** 2)
    nlp = {"x": x, "p": p, "f": f, "g": g}
    bounds = dict(lbx=-1.0, ubx=1.5, lbg=ca.DM([1.0, -np.inf]), ubg=ca.DM([2.0, 4.0]))
    return nlp, bounds


#: p, one column per instance: interior, lbx active, both constraints active, ubx active
P = ca.DM([[0.5, -3.0, 3.0, 2.0], [0.2, 0.4, 3.0, -0.5]])


@pytest.fixture(scope="module")
def solvers():
    nlp, bounds = problem()
    return (nlpsol("S", "caspar", nlp, QC), ca.nlpsol("I", "ipopt", nlp, QI), bounds)



def column(v, b):
    """Instance b's value of a call argument as casadi repeats it."""
    d = ca.DM(v)
    return d if d.size2() == 1 else d[:, b % d.size2()]


def singles(S, args, count):
    """The single calls of every instance (args: the B-column call's keyword args)."""
    return [S(**{k: column(v, b) for k, v in args.items()}) for b in range(count)]


def assert_columns_equal(r, ones):
    for b, rb in enumerate(ones):
        for k in OUT:
            if r[k].numel() == 0:            # an empty output (no p, no g)
                assert rb[k].numel() == 0, k
                continue
            close(np.array(r[k])[:, b], np.array(rb[k]), rtol=1e-10, atol=1e-10,
                  msg=f"{k}[{b}]")


def test_b_columns_equal_single_calls_in_one_batched_solve(solvers, spy):
    S, I, bounds = solvers
    args = dict(x0=ca.DM.zeros(3, B), p=P, **bounds)
    r = S(**args)
    assert spy == [B]
    assert {k: v.shape for k, v in r.items()} == {k: v.shape for k, v in I(**args).items()}
    ones = singles(S, args, B)
    assert spy == [B]                 # the single calls are not batched
    assert_columns_equal(r, ones)
    # distinct active sets, so the comparison covers the multipliers
    assert len({tuple(np.round(np.array(rb["lam_x"]).ravel(), 6)) for rb in ones}) > 2


def test_shared_and_per_instance_inputs_as_casadi_repeats_them(solvers, spy):
    S, I, bounds = solvers
    # x0 with 2 columns (repeated: instances 0,1,0,1), p and ubx with 4, the rest shared
    args = dict(x0=ca.DM([[0.0, 0.5], [0.0, 0.5], [0.0, 0.0]]), p=P, lbx=-1.0,
                ubx=ca.DM(np.array([[1.5, 1.2, 1.5, 0.9]] * 3)), lbg=bounds["lbg"],
                ubg=bounds["ubg"])
    r = S(**args)
    assert spy == [B]
    assert {k: v.shape for k, v in r.items()} == {k: v.shape for k, v in I(**args).items()}
    assert_columns_equal(r, singles(S, args, B))
    # only p with B columns, given as numpy; a transposed vector elsewhere
    r2 = S(x0=np.zeros((1, 3)), p=np.array(P), **bounds)
    assert r2["x"].shape == (3, B) and spy == [B, B]
    close(np.array(r2["x"]), np.array(S(x0=0, p=P, **bounds)["x"]), rtol=0, atol=0)
    # casadi refuses 4 then 2 columns ("multiple of 4"): so does caspar, without solving
    bad = dict(x0=ca.DM.zeros(3, 4), p=P[:, :2], **bounds)
    for F in (S, I):
        with pytest.raises(RuntimeError, match="multiple of 4"):
            F(**bad)
    assert spy == [B, B, B]


def test_positional_and_call_forms(solvers, spy):
    S, I, bounds = solvers
    pos = [ca.DM.zeros(3, 1), P, -1.0, 1.5, bounds["lbg"], bounds["ubg"], 0, 0]
    r = S(*pos)
    assert isinstance(r, tuple) and [v.shape for v in r] == [v.shape for v in I(*pos)]
    rl = S.call(pos)
    assert isinstance(rl, list)
    rd = S.call({"p": P, **bounds})
    for k, a, b in zip(OUT, r, rl):
        close(np.array(a), np.array(b), rtol=0, atol=0, msg=k)
        close(np.array(a), np.array(rd[k]), rtol=0, atol=0, msg=k)
    assert spy == [B, B, B]


def test_stats_after_a_batched_call(solvers):
    S, _, bounds = solvers
    args = dict(x0=0, p=P, **bounds)
    ones = []
    for b in range(B):
        S(**{**args, "p": P[:, b]})
        ones.append(S.stats())
    S(**args)
    st = S.stats()
    # casadi leaves the last column's statistics; the batch lists all of them
    assert st["return_status"] == ones[-1]["return_status"]
    assert st["iter_count"] == ones[-1]["iter_count"]
    assert st["t_wall_total"] > 0
    bt = st["batch"]
    assert bt["size"] == B
    assert bt["iter_count"] == [o["iter_count"] for o in ones]
    assert bt["return_status"] == [o["return_status"] for o in ones]
    assert bt["success"] == [True] * B
    assert bt["unified_return_status"] == ["SOLVER_RET_SUCCESS"] * B
    assert len(bt["path"]) == len(bt["reason"]) == B


def test_map_is_one_batched_solve_with_casadis_shapes(solvers, spy):
    S, I, bounds = solvers
    args = dict(x0=0, p=P, **bounds)
    S(**{**args, "p": P[:, 0]})
    before = S.stats()
    for form in [(B,), (B, "serial"), (B, "thread", 2), (B, "openmp")]:
        M, Mi = S.map(*form), I.map(*form)
        assert M.stats() == {}
        assert [M.sparsity_in(i) for i in range(8)] == [Mi.sparsity_in(i) for i in range(8)]
        assert [M.default_in(i) for i in range(8)] == [Mi.default_in(i) for i in range(8)]
        spy.clear()
        r = M(**args)
        assert spy == [B], form
        assert {k: v.shape for k, v in r.items()} == {k: v.shape for k, v in
                                                     Mi(**args).items()}
        assert M.stats()["batch"]["size"] == B
    assert_columns_equal(r, singles(S, args, B))
    # casadi's map leaves S.stats() alone: so does caspar's
    assert S.stats()["iter_count"] == before["iter_count"] and "batch" not in S.stats()
    assert S.map(1) is S
    # a map of a map is one batch of all instances; with more columns, more instances
    spy.clear()
    assert S.map(2).map(2)(**args)["x"].shape == (3, B)
    assert S.map(2)(**args)["x"].shape == (3, B)
    assert spy == [B, B]


def test_map_with_reductions_as_casadis(solvers, spy):
    S, I, bounds = solvers
    args = dict(x0=ca.DM.zeros(3, 1), p=P, **bounds)
    for form in [("mm", "serial", B, ["x0"], ["f"]), ("mm", "thread", B, [0], [1, 5]),
                 (B, [True] + [False] * 7, [False, True] + [False] * 4)]:
        M, Mi = S.map(*form), I.map(*form)
        assert [M.size_in(i) for i in range(8)] == [Mi.size_in(i) for i in range(8)]
        assert [M.size_out(i) for i in range(6)] == [Mi.size_out(i) for i in range(6)]
        spy.clear()
        r = M(**args)
        assert spy == [B]
        close(np.array(r["f"]), float(np.sum(np.array(S(**args)["f"]))), rtol=1e-12)
    # options and bad arguments are casadi's own map and casadi's own errors
    with pytest.raises(RuntimeError, match="Unknown parallelization"):
        S.map(B, "nonsense")
    with pytest.raises(RuntimeError, match="Degenerate map"):
        S.map(0)


def test_symbolic_calls_are_one_batch_node_with_casadis_derivatives(solvers, spy):
    S, _, bounds = solvers
    Pm = ca.MX.sym("P", 2, B)
    args = dict(x0=0, **bounds)
    ref = S(p=P, **args)
    native = ca.Function.map(S, B)      # casadi's own map: B single-solve nodes
    for name, fn in (("map", S.map(B)), ("columns", S)):
        out = fn(p=Pm, **args)
        F = ca.Function("F", [Pm], [out["x"], out["lam_p"]])
        spy.clear()
        x, lam_p = F(P)
        assert spy == [B], name
        close(np.array(x), np.array(ref["x"]), rtol=1e-10, atol=1e-10)
        close(np.array(lam_p), np.array(ref["lam_p"]), rtol=1e-10, atol=1e-10)
        # forward (jacobian) and reverse (gradient) through the batch node
        J = ca.Function("J", [Pm], [ca.jacobian(out["x"], Pm),
                                    ca.gradient(ca.sum2(out["f"]), Pm)])
        nout = native(p=Pm, **args)
        Jn = ca.Function("J", [Pm], [ca.jacobian(nout["x"], Pm),
                                     ca.gradient(ca.sum2(nout["f"]), Pm)])
        for a, b in zip(J(P), Jn(P)):
            close(np.array(a), np.array(b), rtol=1e-9, atol=1e-9, msg=name)
        assert float(ca.norm_inf(J(P)[0])) > 0.1
    # a symbolic call with one column stays the single-solve node
    q = ca.MX.sym("q", 2)
    F1 = ca.Function("F1", [q], [S(p=q, **args)["x"]])
    spy.clear()
    close(np.array(F1(P[:, 1])), np.array(ref["x"][:, 1]), rtol=1e-10, atol=1e-10)
    assert spy == []


def test_bad_instance_is_named(solvers, spy):
    S, _, bounds = solvers
    lbx = ca.DM(np.array([[-1.0, -1.0, 2.0, -1.0]] * 3))     # instance 2: lbx > ubx
    with pytest.raises(ModelError, match=r"instance 2: Ill-posed problem detected: "
                                         r"variable .* lower bound 2\.0 > upper"):
        S(x0=0, p=P, **{**bounds, "lbx": lbx})
    with pytest.raises(ModelError, match=r"instance 1: parameter"):
        S(x0=0, p=ca.DM([[1.0, np.nan], [0.0, 0.0]]), **bounds)
    assert spy == []


def test_error_on_fail_names_the_instance_and_keeps_stats(capsys):
    nlp, bounds = problem()
    S = nlpsol("S", "caspar", nlp, {**QC, "error_on_fail": True, "print_time": True})
    ubx = ca.DM(np.array([[1.5, 1.5, 0.2, 1.5]] * 3))        # instance 2: x0+x1+x2 <= 0.6 < 1
    with pytest.raises(NlpsolFailure, match="in instance 2 of 4"):
        S(x0=0, p=P, **{**bounds, "ubx": ubx})
    st = S.stats()["batch"]
    assert st["success"] == [True, True, False, True]
    out = capsys.readouterr().out
    assert out.count("t_wall") == 1 and "total" in out     # one table for the batch


def mx_problem():
    """The same problem in MX, with the objective through a casadi Function call."""
    x, p = ca.MX.sym("x", 3), ca.MX.sym("p", 2)
    u, v = ca.MX.sym("u", 2), ca.MX.sym("v", 2)
    dist = ca.Function("dist", [u, v], [ca.sumsqr(u - v)])
    f = dist(x[:2], p) + x[2] ** 2 + 0.5 * x[0] * x[2]
    g = ca.vertcat(x[0] + x[1] + x[2], x[0] ** 2 + x[1] ** 2)
    return {"x": x, "p": p, "f": f, "g": g}, problem()[1]


@pytest.mark.parametrize("make, opts", [
    (problem, {"calc_lam_x": True, "bound_consistency": True}),
    (problem, {"calc_lam_p": False}),
    (mx_problem, {"calc_lam_x": True}),
])
def test_post_processing_options_per_instance(make, opts, spy):
    """calc_lam_x / calc_lam_p / bound_consistency on B solutions at once (casadi
    gradients of the nlp) equal the single solves' (caspar's evaluator)."""
    nlp, bounds = make()
    S = nlpsol("S", "caspar", nlp, {**QC, **opts})
    args = dict(x0=0, p=P, **bounds)
    r = S(**args)
    assert spy == [B]
    assert_columns_equal(r, singles(S, args, B))
    assert np.isnan(np.array(r["lam_p"])).all() == (opts.get("calc_lam_p") is False)


def test_no_parameters_no_constraints(spy):
    """Empty p and g: casadi's 0x0 p and lam_p, 0-row g, in single and B-column calls."""
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2}
    S = nlpsol("S", "caspar", nlp, {**QC, "calc_lam_x": True})
    I = ca.nlpsol("I", "ipopt", nlp, QI)
    assert [S.sparsity_in(i) for i in range(8)] == [I.sparsity_in(i) for i in range(8)]
    assert [S.sparsity_out(i) for i in range(6)] == [I.sparsity_out(i) for i in range(6)]
    X0 = ca.DM([[0.0, -1.0, 2.0], [0.0, 1.0, 2.0]])
    r = S(x0=X0)
    assert spy == [3]
    assert {k: v.shape for k, v in r.items()} == {k: v.shape for k, v in I(x0=X0).items()}
    assert_columns_equal(r, [S(x0=X0[:, b]) for b in range(3)])
    close(np.array(r["x"]), np.ones((2, 3)), rtol=1e-6, atol=1e-6)
