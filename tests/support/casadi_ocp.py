"""Optimal control problems in the form of CasADi's tutorial examples (our own code, the
structure of docs/examples/python/direct_multiple_shooting.py): the initial state is
fixed through ``lbw == ubw``, as in those examples and many MPC scripts.

:func:`direct_multiple_shooting`: the Van der Pol oscillator

    x1' = (1 - x2^2) x1 - x2 + u,   x2' = x1,   x(0) = (0, 1),   T = 10,

``N`` control intervals with a piecewise constant control ``-1 <= u <= 1``, the state
bound ``x1 >= -0.25``, the cost ``int x1^2 + x2^2 + u^2 dt``; each interval is integrated
by ``M`` steps of fixed-step RK4 (states and quadrature), the continuity conditions
``F(X_k, U_k) - X_{k+1} = 0`` are the constraints.  Decision vector
``w = [X_0, U_0, X_1, U_1, ..., X_N]`` (n = 3 N + 2, m = 2 N), X_0 fixed.
"""
from __future__ import annotations

import numpy as np


def direct_multiple_shooting(N=20, M=4, T=10.0, sym="MX"):
    """``(nlp, args)``: the nlp dict and nlpsol's call arguments (x0, lbx, ubx, lbg,
    ubg) of the problem above, with symbols of casadi type ``sym`` ('MX' as the example,
    or 'SX')."""
    import casadi as ca

    S = getattr(ca, sym)
    inf = np.inf
    x = S.sym("x", 2)
    u = S.sym("u")
    xdot = ca.vertcat((1 - x[1] ** 2) * x[0] - x[1] + u, x[0])
    f = ca.Function("f", [x, u], [xdot, x[0] ** 2 + x[1] ** 2 + u ** 2])
    dt = T / N / M
    X0, U = S.sym("X0", 2), S.sym("U")
    X, Q = X0, 0
    for _ in range(M):
        k1, k1q = f(X, U)
        k2, k2q = f(X + dt / 2 * k1, U)
        k3, k3q = f(X + dt / 2 * k2, U)
        k4, k4q = f(X + dt * k3, U)
        X = X + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        Q = Q + dt / 6 * (k1q + 2 * k2q + 2 * k3q + k4q)
    F = ca.Function("F", [X0, U], [X, Q], ["x0", "p"], ["xf", "qf"])
    w, w0, lbw, ubw, g = [], [], [], [], []
    J = 0
    Xk = S.sym("X_0", 2)
    w.append(Xk)
    lbw += [0.0, 1.0]
    ubw += [0.0, 1.0]              # the initial state: fixed by lbw == ubw
    w0 += [0.0, 1.0]
    for k in range(N):
        Uk = S.sym(f"U_{k}")
        w.append(Uk)
        lbw.append(-1.0)
        ubw.append(1.0)
        w0.append(0.0)
        Fk = F(x0=Xk, p=Uk)
        J = J + Fk["qf"]
        Xk = S.sym(f"X_{k + 1}", 2)
        w.append(Xk)
        lbw += [-0.25, -inf]
        ubw += [inf, inf]
        w0 += [0.0, 0.0]
        g.append(Fk["xf"] - Xk)
    nlp = {"x": ca.vertcat(*w), "f": J, "g": ca.vertcat(*g)}
    args = dict(x0=np.array(w0), lbx=np.array(lbw), ubx=np.array(ubw),
                lbg=np.zeros(2 * N), ubg=np.zeros(2 * N))
    return nlp, args
