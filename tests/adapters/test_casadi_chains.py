"""Deep chains of calls (single shooting through nested MX Functions) are opaque calls
(adapters/casadi/chains.py, ``chained_functions``): a rocket integrated by explicit
Euler steps, ``X = F(X, U[k])`` for k = 1..N, set up in a fraction of a second where
inlining it made the Hessian's derivation grow as N^3 (52 s at N = 100), and solved with
IPOPT's status, iterations and objective.  Short chains (an RK4 step's four stages, a
multiple-shooting loop) stay inlined."""
from __future__ import annotations

import io
import time

import casadi as ca
import numpy as np
import pytest

from caspar_backend.adapters.casadi.chains import CHAIN_MIN_DEPTH, chained_functions
from caspar_backend.adapters.casadi.models import rocket_single_shooting as rocket
from caspar_backend.casadi import nlpsol

QI = {"ipopt": {"print_level": 0, "sb": "yes"}, "print_time": False}


def _check_against_ipopt(nlp, args, seconds, name="F"):
    ref = ca.nlpsol("R", "ipopt", nlp, QI)
    r_ref = ref(**args)
    out = io.StringIO()
    t = time.perf_counter()
    S = nlpsol("S", "caspar", nlp, {"print_time": False,
                                     "caspar": {"print_level": 5, "stream": out}})
    r = S(**args)
    took = time.perf_counter() - t
    st, st_ref = S.stats(), ref.stats()
    assert (st["return_status"], st["iter_count"]) == (st_ref["return_status"],
                                                       st_ref["iter_count"])
    assert abs(float(r["f"]) - float(r_ref["f"])) <= 1e-8 * abs(float(r_ref["f"]))
    np.testing.assert_allclose(np.array(r["x"]), np.array(r_ref["x"]), atol=1e-6)
    assert f"Opaque function '{name}'" in out.getvalue()
    assert took < seconds, took


@pytest.mark.parametrize("nested", [False, True])
def test_deep_single_shooting_is_opaque_and_solves_as_ipopt(nested):
    _check_against_ipopt(*rocket(100, nested), seconds=10.0)


def test_chain_depth_counts_calls_through_other_operations():
    x, u = ca.MX.sym("x", 3), ca.MX.sym("u")
    F = ca.Function("F", [x, u], [x * u])
    G = ca.Function("G", [x], [ca.sin(x)])
    U = ca.MX.sym("U", 40)
    X = ca.MX.ones(3)
    for k in range(CHAIN_MIN_DEPTH):
        X = 2 * F(X, U[k])[[0, 1, 2]] + 1          # the chain runs through other ops
    Y = [G(U[k:k + 3]) for k in range(20)]          # 20 independent calls: depth 1
    fn = ca.Function("t", [U], [X, ca.vertcat(*Y)])
    assert [f.name() for f in chained_functions(fn)] == ["F"]
    short = ca.Function("s", [U], [F(F(ca.MX.ones(3), U[0]), U[1])])
    assert chained_functions(short) == []


@pytest.mark.parametrize("kind", ["mapaccum", "fold"])
def test_mapaccum_and_fold_chains_are_found_through_their_nesting(kind):
    """casadi builds ``F.mapaccum(100)`` / ``F.fold(100)`` as ten chained calls of a
    Function of ten chained calls of F: 100 calls of F on one path."""
    N = 100
    x, u = ca.MX.sym("x", 3), ca.MX.sym("u")
    dt = 10.0 / N
    F = ca.Function("F", [x, u], [x + dt * ca.vertcat(x[1], (u - 0.05 * x[1] ** 2) / x[2],
                                                      -0.1 * u ** 2)])
    U = ca.MX.sym("U", N)
    if kind == "mapaccum":
        XN = F.mapaccum("Fa", N)(ca.DM([0, 0, 1]), U.T)[:, -1]
    else:
        XN = F.fold(N)(ca.DM([0, 0, 1]), U.T)
    nlp = {"x": U, "f": ca.sumsqr(U) * dt, "g": ca.vertcat(XN[0], XN[1])}
    _check_against_ipopt(nlp, dict(x0=0.4, lbx=-1, ubx=1, lbg=[10, 0], ubg=[10, 0]),
                         seconds=10.0)


def test_a_mapped_few_input_step_is_inlined_whatever_its_chain():
    """Multiple shooting whose step Function runs 20 Euler sub-steps (a chain of 20 calls
    of the ODE, above CHAIN_MIN_DEPTH) on 4 inputs, mapped over the intervals: no opaque
    call (each instance inlined is an expression of its 4 inputs), and IPOPT's solve."""
    x, u = ca.MX.sym("x", 3), ca.MX.sym("u")
    ode = ca.Function("ode", [x, u], [ca.vertcat(x[1], (u - 0.05 * x[1] ** 2) / x[2],
                                                 -0.1 * u ** 2)])
    M, dt = 20, 0.5 / 20
    assert M >= CHAIN_MIN_DEPTH
    X = x
    for _ in range(M):
        X = X + dt * ode(X, u)
    step = ca.Function("step", [x, u], [X])
    N = 20
    W = ca.MX.sym("W", 3, N + 1)
    U = ca.MX.sym("U", N)
    Xn = step.map(N)(W[:, :N], U.T)
    nlp = {"x": ca.veccat(W, U), "f": ca.sumsqr(U) * 10.0 / N,
           "g": ca.vertcat(ca.vec(Xn - W[:, 1:]), W[:, 0] - ca.DM([0, 0, 1]),
                           W[0, N] - 10, W[1, N])}
    assert [f.name() for f in chained_functions(step)] == ["ode"]     # the rule's input
    args = dict(x0=np.r_[np.tile([0, 0, 1.0], N + 1), np.full(N, 0.4)], lbg=0, ubg=0)
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {"print_level": 0}})
    assert S.problem.extended is None                                  # nothing opaque
    ref = ca.nlpsol("R", "ipopt", nlp, QI)
    r, r_ref = S(**args), ref(**args)
    assert (S.stats()["return_status"], S.stats()["iter_count"]) == (
        ref.stats()["return_status"], ref.stats()["iter_count"])
    np.testing.assert_allclose(np.array(r["x"]), np.array(r_ref["x"]), atol=1e-6)


def _parameter_fit(n_calls=20, M=8, dt=0.05):
    """Single shooting of a parameter fit (casadi's sysid system, scaled to unit
    parameters): ``G = F.mapaccum(M)`` chained ``n_calls`` times, each call reading the
    four parameters repeated M times (``repmat``): 2 + 4M differentiated inputs per call
    that depend on 6 quantities (the parameters and the state it starts from)."""
    s, u, p = ca.MX.sym("s", 2), ca.MX.sym("u"), ca.MX.sym("p", 4)

    def rhs(v):
        return ca.vertcat(v[1], (u - p[3] * v[0] ** 3 - p[2] * v[0] - p[1] * v[1]) / p[0])

    k1 = rhs(s)
    k2 = rhs(s + dt / 2 * k1)
    k3 = rhs(s + dt / 2 * k2)
    k4 = rhs(s + dt * k3)
    F = ca.Function("F", [s, u, p], [s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])
    G = F.mapaccum("G", M)
    u_data = np.sin(0.3 * np.arange(n_calls * M)) + 0.5
    truth = np.array([1.0, 0.3, 1.0, 0.5])

    def simulate(par):
        X, ys = ca.DM([0.2, 0.0]) if isinstance(par, np.ndarray) else ca.MX([0.2, 0.0]), []
        for c in range(n_calls):
            Xs = G(X, ca.DM(u_data[c * M:(c + 1) * M]).T, ca.repmat(par, 1, M))
            ys.append(Xs[0, :].T)
            X = Xs[:, -1]
        return ca.vertcat(*ys)

    y_data = np.asarray(simulate(truth)).ravel()
    y_data = y_data + 0.01 * np.cos(1.7 * np.arange(y_data.size))     # a residual left
    par = ca.MX.sym("par", 4)
    e = y_data - simulate(par)
    return {"x": par, "f": 0.5 * ca.dot(e, e)}, dict(x0=[0.8, 0.4, 1.2, 0.4])


def test_repeated_parameters_are_differentiated_along_seeds():
    """The chained call's arguments repeat the parameters (2 + 4M active inputs, 6
    quantities): its derivatives come from 6 seeded directions (opaque/seeds.py), its
    body from casadi's SX expansion; the composition equals casadi's own derivatives of
    the NLP, and the solve is IPOPT's."""
    from caspar_backend import from_casadi

    nlp, args = _parameter_fit()
    ev = from_casadi(nlp).evaluator("cpu")
    (plan,) = ev._seeds
    assert plan is not None and plan.K == 6 and plan.k == 2 + 4 * 8
    assert ev.calls.groups[0].fn._sx_body
    x = np.array([0.9, 0.35, 1.1, 0.45])
    X = nlp["x"]
    ref = ca.Function("r", [X], [nlp["f"], ca.gradient(nlp["f"], X),
                                 ca.hessian(0.7 * nlp["f"], X)[0]])(x)
    f, gf, H = (np.asarray(ca.DM(v).full()) for v in ref)
    assert abs(ev.obj(x) - f.item()) <= 1e-12 * abs(f.item())
    np.testing.assert_allclose(ev.grad(x), gf.ravel(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(ev.hess(x, np.zeros(0), 0.7).toarray(), H, rtol=1e-8,
                               atol=1e-11)
    _check_against_ipopt(nlp, args, seconds=20.0, name="G")


def test_a_chained_body_calling_an_integrator_stays_mx():
    """A chained MX Function whose body calls cvodes is not expanded to SX (there the
    integrator's derivatives would go through an SX call node, slower), but its
    repeated parameters still give seeds; the solve is IPOPT's."""
    from caspar_backend import from_casadi

    s, q = ca.SX.sym("s", 2), ca.SX.sym("q", 3)
    dae = {"x": s, "p": q, "ode": ca.vertcat(s[1], -q[1] * s[0] - q[2] * s[1] + q[0])}
    I = ca.integrator("I", "cvodes", dae, 0.0, 0.1, {"abstol": 1e-10, "reltol": 1e-10})
    x, u, p = ca.MX.sym("x", 2), ca.MX.sym("u"), ca.MX.sym("p", 2)
    F = ca.Function("F", [x, u, p], [I(x0=x, p=ca.vertcat(u, p))["xf"]])
    M, C = 4, CHAIN_MIN_DEPTH
    G = F.mapaccum("G", M)
    u_data = np.sin(np.arange(M * C))

    def simulate(par):
        X, ys = ca.DM([1.0, 0.0]) if isinstance(par, np.ndarray) else ca.MX([1.0, 0.0]), []
        for c in range(C):
            Xs = G(X, ca.DM(u_data[c * M:(c + 1) * M]).T, ca.repmat(par, 1, M))
            ys.append(Xs[0, :].T)
            X = Xs[:, -1]
        return ca.vertcat(*ys)

    y = np.asarray(simulate(np.array([2.0, 0.3]))).ravel() + 0.01 * np.cos(np.arange(M * C))
    P = ca.MX.sym("P", 2)
    e = y - simulate(P)
    nlp = {"x": P, "f": 0.5 * ca.dot(e, e)}
    ev = from_casadi(nlp).evaluator("cpu")
    (plan,) = ev._seeds
    assert plan is not None and (plan.K, plan.k) == (4, 2 + 2 * M)     # u: constants
    assert not ev.calls.groups[0].fn._sx_body
    _check_against_ipopt(nlp, dict(x0=[1.5, 0.5]), seconds=60.0, name="G")
