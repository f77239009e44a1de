"""CasADi's own nlpsol conformance problems, run through caspar's nlpsol.

CasADi's ``test/python/nlp.py`` runs each problem against a list of
``(solver, options)`` pairs; for ipopt the options are ``tol=1e-10``,
``print_level=0``, ``print_time=False`` and the checks are ``assertAlmostEqual``
to a number of decimal places.  The problems and assertions below are
re-expressed for caspar with the same options and the same digits, so a failure
here is a behaviour difference a casadi user switching ``'ipopt'`` to
``'caspar'`` would see.  Each test names the casadi test it mirrors.
"""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

from caspar_backend.casadi import nlpsol

INF = math.inf
# the ipopt entry of casadi's solver list: exact Hessian, tol 1e-10, silent
OPTS = {"print_time": False, "caspar": {"tol": 1e-10, "print_level": 0}}
LBFGS = {"print_time": False,
         "caspar": {"tol": 1e-10, "print_level": 0, "hessian_approximation": "limited-memory"}}
SYMS = [ca.SX, ca.MX]


def solve(nlp, opts=OPTS, **args):
    S = nlpsol("S", "caspar", nlp, opts)
    out = S(**args)
    return S, {k: np.array(v.full()).ravel() for k, v in out.items()}


def close(a, b, places):
    """unittest's assertAlmostEqual: round(a - b, places) == 0."""
    assert round(float(a) - float(b), places) == 0, (float(a), float(b), places)


@pytest.mark.parametrize("sym", SYMS)
def test_initialcond(sym):                         # test_initialcond
    x = sym.sym("x")
    S, o = solve({"x": x, "f": -ca.cos(x), "g": x}, x0=6 * math.pi + 0.01,
                 lbx=-INF, ubx=INF, lbg=-100, ubg=100)
    assert S.stats()["success"]
    close(o["x"][0], 6 * math.pi, 6)


@pytest.mark.parametrize("case", [dict(lbx=-10, ubx=-20, lbg=-10, ubg=10),
                                  dict(lbx=-10, ubx=10, lbg=-10, ubg=-20)])
def test_bounds_violated_raise(case):              # test_boundsviol
    x = ca.SX.sym("x")
    S = nlpsol("S", "caspar", {"x": x, "f": (x - 1) ** 2, "g": x}, OPTS)
    with pytest.raises(Exception):
        S(**case)


@pytest.mark.parametrize("opts", [OPTS, LBFGS], ids=["exact", "lbfgs"])
@pytest.mark.parametrize("sym", SYMS)
def test_trivial(sym, opts):                       # test_IPOPT
    x = sym.sym("x")
    S, o = solve({"x": x, "f": (x - 1) ** 2, "g": x}, opts,
                 lbx=-10, ubx=10, lbg=-10, ubg=10)
    st = S.stats()
    assert st["success"] and st["unified_return_status"] == "SOLVER_RET_SUCCESS"
    close(o["f"][0], 0, 10)
    close(o["x"][0], 1, 9)
    close(o["g"][0], 1, 9)
    close(o["lam_x"][0], 0, 8)
    close(o["lam_g"][0], 0, 9)


def test_parametric():                             # test_IPOPT_par
    x, p = ca.SX.sym("x"), ca.SX.sym("p")
    S, o = solve({"x": x, "p": p, "f": (x - p) ** 2, "g": x},
                 lbx=-10, ubx=10, lbg=-10, ubg=10, p=1)
    assert S.stats()["success"]
    close(o["f"][0], 0, 10)
    close(o["x"][0], 1, 9)
    close(o["lam_x"][0], 0, 8)
    close(o["lam_g"][0], 0, 9)


def test_infinite_bounds_and_defaults():           # test_IPOPTinf
    x = ca.SX.sym("x")
    nlp = {"x": x, "f": (x - 1) ** 2, "g": x}
    for args in (dict(lbx=-INF, ubx=INF, lbg=-INF, ubg=INF), {}):
        S, o = solve(nlp, **args)
        assert S.stats()["success"]
        close(o["f"][0], 0, 10)
        close(o["x"][0], 1, 7)
        close(o["lam_x"][0], 0, 9)
        close(o["lam_g"][0], 0, 9)


@pytest.mark.parametrize("opts", [OPTS, LBFGS], ids=["exact", "lbfgs"])
def test_rosenbrock_empty_g(opts):                 # test_IPOPTrb
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    S, o = solve({"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2},
                 opts, lbx=[-10] * 2, ubx=[10] * 2)
    assert S.stats()["success"]
    close(o["f"][0], 0, 10)
    close(o["x"][0], 1, 6)
    close(o["x"][1], 1, 6)
    close(o["lam_x"][0], 0, 5)
    close(o["lam_x"][1], 0, 5)
    assert o["g"].size == 0 and o["lam_g"].size == 0


def test_rosenbrock_inactive_constraint():         # test_IPOPTrb2
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    S, o = solve({"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2,
                  "g": x + y}, lbx=[-10] * 2, ubx=[10] * 2, lbg=-10, ubg=10)
    assert S.stats()["success"]
    for v, ref in ((o["f"][0], 0), (o["x"][0], 1), (o["x"][1], 1)):
        close(v, ref, 6)
    close(o["lam_x"][0], 0, 5)
    close(o["lam_g"][0], 0, 5)


def test_fixed_variable_lbx_eq_ubx():              # test_IPOPTrbf
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    S, o = solve({"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2,
                  "g": x + y}, x0=[0, 1], lbx=[-10, 1], ubx=[10, 1], lbg=-10, ubg=10)
    assert S.stats()["success"]
    close(o["f"][0], 0, 10)
    close(o["x"][0], 1, 7)
    close(o["x"][1], 1, 7)
    close(o["lam_x"][0], 0, 5)
    close(o["lam_x"][1], 0, 5)
    close(o["lam_g"][0], 0, 5)


def test_warm_start_with_multipliers():            # test_warmstart
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    nlp = {"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2,
           "g": x ** 2 + y ** 2}
    f_ref, x_ref = 4.56748075136258e-02, [7.86415156987791e-01, 6.17698316967954e-01]
    bounds = dict(lbx=[-10] * 2, ubx=[10] * 2, lbg=0, ubg=1)
    S, o = solve(nlp, x0=[0.5, 0.5], **bounds)
    close(o["f"][0], f_ref, 5)
    close(o["x"][0], x_ref[0], 5)
    close(o["x"][1], x_ref[1], 5)
    close(o["lam_x"][0], 0, 8)
    close(o["lam_x"][1], 0, 8)
    close(o["lam_g"][0], 0.12149655447670, 6)
    warm = {"print_time": False, "caspar": {
        "tol": 1e-10, "print_level": 0, "warm_start_init_point": "yes",
        "warm_start_bound_push": 1e-6, "warm_start_slack_bound_push": 1e-6,
        "warm_start_mult_bound_push": 1e-6, "mu_init": 1e-6}}
    S2, o2 = solve(nlp, warm, x0=o["x"], lam_g0=o["lam_g"], lam_x0=o["lam_x"], **bounds)
    assert S2.stats()["success"]
    # a warm start at the solution must not need the cold start's iterations
    assert S2.stats()["iter_count"] <= S.stats()["iter_count"]
    close(o2["f"][0], f_ref, 5)
    close(o2["lam_g"][0], 0.12149655447670, 6)


@pytest.mark.parametrize("sym", SYMS)
def test_equality_constraint(sym):                 # test_IPOPTc / test_IPOPTcmx
    x, y = sym.sym("x"), sym.sym("y")
    S, o = solve({"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2,
                  "g": x + y}, x0=[0, 0], lbx=[-10] * 2, ubx=[10] * 2, lbg=1, ubg=1)
    assert S.stats()["success"]
    close(o["x"][0] + o["x"][1], 1, 8)
    # reference values from casadi's ipopt with the same options
    R = ca.nlpsol("R", "ipopt", {"x": ca.vertcat(x, y),
                                 "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2, "g": x + y},
                  {"print_time": False, "ipopt": {"tol": 1e-10, "print_level": 0}})
    r = R(x0=[0, 0], lbx=[-10] * 2, ubx=[10] * 2, lbg=1, ubg=1)
    for k in ("x", "f", "lam_g", "lam_x"):
        np.testing.assert_allclose(o[k], np.ravel(r[k].full()), atol=1e-6)


def test_degenerate_no_objective():                # test_IPOPTdeg
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    _, o = solve({"x": ca.vertcat(x, y), "f": 0, "g": ca.vertcat(x - y, x)},
                 lbx=[-10, -10], ubx=[10, 10], lbg=[0, 3], ubg=[0, 3])
    close(o["x"][0], o["x"][1], 10)


def test_degenerate_overconstrained():             # test_IPOPTdegc
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    _, o = solve({"x": ca.vertcat(x, y), "f": 0, "g": ca.vertcat(x - y, x, x + y)},
                 lbx=[-10, -10], ubx=[10, 10], lbg=[0, 3, -10], ubg=[0, 3, 10])
    close(o["x"][0], o["x"][1], 10)


@pytest.mark.parametrize("which,lbx,ubx,lbg,ubg,xs,lamx,lamg", [
    # test_activeLBX / UBX / LBG / UBG: min (x-1)^2 pushed against one bound;
    # lam at the bound = -df/dx = -2(x*-1) (casadi: lam_x < 0 at a lower bound)
    ("lbx", 2, 10, -10, 10, 2, -2, 0),
    ("ubx", -10, 0, -10, 10, 0, 2, 0),
    ("lbg", -10, 10, 2, 10, 2, 0, -2),
    ("ubg", -10, 10, -10, 0, 0, 0, 2),
])
def test_active_bound_multipliers(which, lbx, ubx, lbg, ubg, xs, lamx, lamg):
    x = ca.SX.sym("x")
    S, o = solve({"x": x, "f": (x - 1) ** 2, "g": x},
                 lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)
    assert S.stats()["success"]
    close(o["x"][0], xs, 7)
    close(o["lam_x"][0], lamx, 6)
    close(o["lam_g"][0], lamg, 6)


def test_qp():                                     # test_QP
    x = ca.SX.sym("x", 2)
    H = np.array([[1.0, -1.0], [-1.0, 2.0]])
    g = np.array([-2.0, -6.0])
    A = np.array([[1.0, 1.0], [-1.0, 2.0], [2.0, 1.0]])
    f = 0.5 * ca.mtimes(ca.mtimes(x.T, H), x) + ca.mtimes(g.reshape(1, 2), x)
    S, o = solve({"x": x, "f": f, "g": ca.mtimes(A, x)},
                 lbx=[0, 0], ubx=[INF, INF], lbg=[-INF] * 3, ubg=[2, 2, 3])
    assert S.stats()["success"]
    close(o["x"][0], 2.0 / 3, 6)
    close(o["x"][1], 4.0 / 3, 6)
    close(o["f"][0], -8 - 2.0 / 9, 6)
    np.testing.assert_allclose(o["lam_g"], [3 + 1.0 / 9, 4.0 / 9, 0], atol=1e-6)


def test_no_success_and_error_on_fail():           # test_no_success
    x, y = ca.SX.sym("x"), ca.SX.sym("y")
    nlp = {"x": ca.vertcat(x, y), "f": (1 - x) ** 2 + 100 * (y - x ** 2) ** 2,
           "g": ca.vertcat(x + 1, x - 2)}
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0}})
    S(x0=0, lbg=0, ubg=0)
    assert not S.stats()["success"]
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "error_on_fail": True,
                                    "caspar": {"print_level": 0}})
    with pytest.raises(RuntimeError):
        S(x0=0, lbg=0, ubg=0)


def test_no_stats_before_solve():                  # test_unsolved_stats
    x = ca.MX.sym("x")
    S = nlpsol("S", "caspar", {"x": x, "f": (x - 1) ** 2, "g": x}, OPTS)
    with pytest.raises(Exception, match="No stats available"):
        S.stats()


def test_stats_fields():
    x = ca.SX.sym("x")
    S, _ = solve({"x": x, "f": (x - 1) ** 2})
    st = S.stats()
    for key in ("return_status", "success", "unified_return_status", "iter_count",
                "t_wall_total"):
        assert key in st, key
    assert st["return_status"] == "Solve_Succeeded"


def test_infeasible_with_error_on_fail():          # test_infeasible
    x = ca.MX.sym("x")
    S = nlpsol("S", "caspar", {"f": x ** 2, "x": x, "g": ca.sin(x)},
               {"print_time": False, "error_on_fail": True, "caspar": {"print_level": 0}})
    S(lbg=-10, ubg=10)
    with pytest.raises(RuntimeError):
        S(lbg=5, ubg=10)


def test_nan_in_input_is_an_error():               # test_nan
    x = ca.SX.sym("x")
    S = nlpsol("S", "caspar", {"x": x, "f": (x - 1) ** 2}, OPTS)
    with pytest.raises(Exception):
        S(x0=0, lbx=math.nan)


def test_wrong_dimensions_are_an_error():          # test_wrongdims
    x = ca.SX.sym("x", 2)
    S = nlpsol("S", "caspar", {"x": x, "f": ca.sumsqr(x)}, OPTS)
    with pytest.raises(Exception):
        S(x0=[1, 2, 3])


def test_empty_x_is_refused_or_solved():           # nlp with no decision variable
    x = ca.SX.sym("x", 0)
    try:
        S = nlpsol("S", "caspar", {"x": x, "f": 3})
        o = S()
    except Exception as exc:                       # a clear error is acceptable
        assert str(exc)
        return
    assert float(o["f"]) == 3


def test_parametric_sensitivity_matches_ipopt():   # test_nlp_sensitivity
    x, p = ca.SX.sym("x", 2), ca.SX.sym("p", 2)
    nlp = {"x": x, "p": p, "f": (x[0] - p[0]) ** 2 + 2 * (x[1] - p[1] * x[0]) ** 2,
           "g": x[0] + x[1]}
    args = dict(x0=[0.3, 0.4], lbg=-INF, ubg=1)
    pp = ca.MX.sym("pp", 2)
    jac = {}
    for name, solver, o in (("caspar", nlpsol, OPTS),
                            ("ipopt", ca.nlpsol,
                             {"print_time": False, "ipopt": {"tol": 1e-10, "print_level": 0}})):
        S = solver("S", name, nlp, o)
        sol = S(p=pp, **args)
        J = ca.Function("J", [pp], [ca.jacobian(sol["x"], pp), ca.jacobian(sol["f"], pp)])
        jac[name] = [np.array(v.full()) for v in J([2.0, 0.5])]
    for a, b in zip(jac["caspar"], jac["ipopt"]):
        np.testing.assert_allclose(a, b, atol=1e-6)
