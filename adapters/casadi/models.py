"""Scalable CasADi models shared by ``caspar demo``, the examples and the benchmarks.

Each builder returns ``(nlp, args)``: the problem dict ``casadi.nlpsol`` takes and
the keyword arguments of a solve (``x0``, ``lbx``, ``ubx``, ``lbg``, ``ubg``).
"""

from __future__ import annotations

import numpy as np


def vanderpol_ocp(N: int = 2000, T: float = 10.0):
    """Van der Pol oscillator, optimal control by direct multiple shooting.

    States ``x = (x1, x2)``, control ``u``:

        x1' = (1 - x2^2) x1 - x2 + u,   x2' = x1,
        min  int_0^T x1^2 + x2^2 + u^2 dt,
        x(0) = (0, 1),  x1 >= -0.25,  -1 <= u <= 1.

    One RK4 step (with the integrand as a quadrature) per interval, the step
    function applied to all N intervals with ``Function.map`` so the N defect
    constraints ``X[:, k+1] - F(X[:, k], U[k]) = 0`` share one template.
    Variables are ordered ``X[:, 0..N]`` (column-major) then ``U[0..N-1]``:
    n = 3N + 2, m = 2N.
    """
    import casadi as ca

    x = ca.SX.sym("x", 2)
    u = ca.SX.sym("u")
    rhs = ca.Function("rhs", [x, u], [ca.vertcat((1 - x[1] ** 2) * x[0] - x[1] + u, x[0]),
                                      x[0] ** 2 + x[1] ** 2 + u ** 2])
    dt = T / N
    k1, q1 = rhs(x, u)
    k2, q2 = rhs(x + dt / 2 * k1, u)
    k3, q3 = rhs(x + dt / 2 * k2, u)
    k4, q4 = rhs(x + dt * k3, u)
    step = ca.Function("step", [x, u], [x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4),
                                        dt / 6 * (q1 + 2 * q2 + 2 * q3 + q4)])
    X = ca.MX.sym("X", 2, N + 1)
    U = ca.MX.sym("U", 1, N)
    Xn, Q = step.map(N)(X[:, :N], U)
    nlp = {"x": ca.veccat(X, U), "f": ca.sum2(Q), "g": ca.vec(Xn - X[:, 1:])}
    n = 2 * (N + 1) + N
    lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
    lbx[0:2 * (N + 1):2] = -0.25          # x1 >= -0.25
    lbx[:2], ubx[:2] = [0.0, 1.0], [0.0, 1.0]  # initial state fixed
    lbx[2 * (N + 1):], ubx[2 * (N + 1):] = -1.0, 1.0
    x0 = np.zeros(n)
    x0[1:2 * (N + 1):2] = 1.0
    return nlp, dict(x0=x0, lbx=lbx, ubx=ubx, lbg=np.zeros(2 * N), ubg=np.zeros(2 * N))
