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


def collocation_coefficients(d: int = 3, scheme: str = "legendre"):
    r"""The coefficients of degree-``d`` orthogonal collocation on one interval.

    With ``tau_0 = 0`` and ``tau_1..tau_d`` casadi's ``collocation_points(d, scheme)``, and
    ``L_j`` the Lagrange polynomial of ``tau_0..tau_d`` that is 1 at ``tau_j``:

        C[j, r] = L_j'(tau_r)      (the state derivative at ``tau_r`` is sum_j C[j, r] X_j / h)
        D[j]    = L_j(1)           (the state at the interval's end)
        B[j]    = int_0^1 L_j      (the quadrature weights)

    Returns ``(tau, C, D, B)`` as NumPy arrays of shapes ``(d+1,)``, ``(d+1, d+1)``,
    ``(d+1,)``, ``(d+1,)``.
    """
    import casadi as ca
    from numpy.polynomial import polynomial as P

    tau = np.concatenate([[0.0], np.asarray(ca.collocation_points(d, scheme), float)])
    C, D, B = np.zeros((d + 1, d + 1)), np.zeros(d + 1), np.zeros(d + 1)
    for j in range(d + 1):
        L = np.array([1.0])
        for r in range(d + 1):
            if r != j:
                L = P.polymul(L, np.array([-tau[r], 1.0]) / (tau[j] - tau[r]))
        D[j] = P.polyval(1.0, L)
        C[j] = P.polyval(tau, P.polyder(L))
        B[j] = P.polyval(1.0, P.polyint(L))
    return tau, C, D, B


def vanderpol_collocation(N: int = 2000, T: float = 10.0, d: int = 3,
                          initial_state_param: bool = False):
    """Van der Pol oscillator, optimal control by direct collocation.

    The problem of :func:`vanderpol_ocp`, discretized on ``N`` intervals of length
    ``h = T / N`` with a degree-``d`` polynomial (Legendre points,
    :func:`collocation_coefficients`) per interval; the control is constant on an interval.
    Per interval ``k`` with state ``X_k``, collocation states ``Xc_k = (X_k1..X_kd)`` and
    control ``U_k``:

        h f(X_kr, U_k) = sum_j C[j, r] X_kj            r = 1..d   (collocation, X_k0 = X_k)
        X_{k+1}        = sum_j D[j] X_kj                          (continuity)
        objective     += h sum_j B[j] q(X_kj, U_k)                (quadrature)

    with ``f`` the dynamics and ``q = x1^2 + x2^2 + u^2``; ``x1 >= -0.25`` at every state
    and collocation point, ``-1 <= u <= 1``, ``x(0) = (0, 1)``.  One casadi Function per
    interval applied to all N with ``Function.map``, so caspar reads each of its rows as
    one template.  Variables are ordered ``X[:, 0..N]``, ``Xc[:, 0..N-1]`` (``2d`` rows,
    column-major), ``U[0..N-1]``: n = (2d + 3) N + 2, m = (2d + 2) N.

    ``initial_state_param=True`` (one MPC step from any initial state): the initial state
    is the parameter ``p = (x1(0), x2(0))`` instead of the fixed ``(0, 1)``; ``X_0`` is free
    (no bounds: the measured state need not satisfy the path constraint) and two rows
    ``X_0 - p = 0`` follow the others, so m = (2d + 2) N + 2; ``args`` gets ``p = (0, 1)``.
    """
    import casadi as ca

    _, C, D, B = collocation_coefficients(d)
    h = T / N
    x, u = ca.SX.sym("x", 2), ca.SX.sym("u")
    f = ca.Function("f", [x, u], [ca.vertcat((1 - x[1] ** 2) * x[0] - x[1] + u, x[0]),
                                  x[0] ** 2 + x[1] ** 2 + u ** 2])
    xk, xk1, xc = ca.SX.sym("xk", 2), ca.SX.sym("xk1", 2), ca.SX.sym("xc", 2 * d)
    pts = [xk] + [xc[2 * r:2 * r + 2] for r in range(d)]
    rows, J = [], 0
    for r in range(1, d + 1):
        dx, q = f(pts[r], u)
        rows.append(h * dx - sum(C[j, r] * pts[j] for j in range(d + 1)))
        J += h * B[r] * q
    rows.append(xk1 - sum(D[j] * pts[j] for j in range(d + 1)))
    interval = ca.Function("interval", [xk, xc, u, xk1], [ca.vertcat(*rows), J])
    X, XC, U = ca.MX.sym("X", 2, N + 1), ca.MX.sym("Xc", 2 * d, N), ca.MX.sym("U", 1, N)
    G, Q = interval.map(N)(X[:, :N], XC, U, X[:, 1:])
    nlp = {"x": ca.veccat(X, XC, U), "f": ca.sum2(Q), "g": ca.vec(G)}
    nX, nC = 2 * (N + 1), 2 * d * N
    n = nX + nC + N
    lbx, ubx = np.full(n, -np.inf), np.full(n, np.inf)
    lbx[0:nX + nC:2] = -0.25                 # x1 >= -0.25 at states and collocation points
    lbx[:2], ubx[:2] = [0.0, 1.0], [0.0, 1.0]  # initial state fixed
    lbx[nX + nC:], ubx[nX + nC:] = -1.0, 1.0
    x0 = np.zeros(n)
    x0[1:nX + nC:2] = 1.0
    m = (2 * d + 2) * N
    args = {}
    if initial_state_param:
        P = ca.MX.sym("x_init", 2)
        nlp.update(p=P, g=ca.vertcat(nlp["g"], X[:, 0] - P))
        lbx[:2], ubx[:2] = -np.inf, np.inf
        m += 2
        args["p"] = np.array([0.0, 1.0])
    return nlp, dict(x0=x0, lbx=lbx, ubx=ubx, lbg=np.zeros(m), ubg=np.zeros(m), **args)


#: link lengths of the three-link planar arm
ARM_LINKS = (1.0, 0.8, 0.6)


def arm_ik():
    """The three-link planar arm inverse kinematics, ``(nlp, bounds)``: joint angles q
    (3), parameters t = (tx, ty) (the target),

        min_q  (x_e(q) - tx)^2 + (y_e(q) - ty)^2 + 1e-3 |q|^2
        s.t.   -pi <= q_i <= pi,   q_1 + q_2 + q_3 <= 2.5,

    with ``x_e = sum_k l_k cos(q_1 + ... + q_k)`` (``y_e`` with sin), l = ARM_LINKS."""
    import casadi as ca
    import numpy as np

    q = ca.SX.sym("q", 3)
    t = ca.SX.sym("t", 2)
    ang, xe, ye = 0, 0, 0
    for k, lk in enumerate(ARM_LINKS):
        ang = ang + q[k]
        xe = xe + lk * ca.cos(ang)
        ye = ye + lk * ca.sin(ang)
    f = (xe - t[0]) ** 2 + (ye - t[1]) ** 2 + 1e-3 * ca.sumsqr(q)
    bounds = dict(lbx=[-np.pi] * 3, ubx=[np.pi] * 3, lbg=-np.inf, ubg=2.5)
    return {"x": q, "p": t, "f": f, "g": q[0] + q[1] + q[2]}, bounds


def arm_targets(n: int, seed: int = 0):
    """``n`` reachable targets (n, 2): radius in [0.3, 2.2] (reach 2.4), any direction."""
    import numpy as np

    rng = np.random.default_rng(seed)
    r = rng.uniform(0.3, 2.2, n)
    a = rng.uniform(-np.pi, np.pi, n)
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)


def rocket_single_shooting(N: int = 100, nested: bool = False):
    """Minimum-effort rocket ascent by single shooting: state (height, speed, mass),
    thrust U[k] in [-1, 1] on N explicit Euler steps of 10 / N through one MX Function
    ``F``, called in a chain ``X = F(X, U[k])`` from X = (0, 0, 1); f = dt * sum U^2,
    final height 10 and speed 0.  ``nested``: the chain sits inside an MX Function
    ``rollout`` called once.  Returns ``(nlp, args)`` for ``nlpsol`` and its call."""
    import casadi as ca

    x, u = ca.MX.sym("x", 3), ca.MX.sym("u")
    dt = 10.0 / N
    ode = ca.vertcat(x[1], (u - 0.05 * x[1] ** 2) / x[2], -0.1 * u ** 2)
    F = ca.Function("F", [x, u], [x + dt * ode])
    U = ca.MX.sym("U", N)

    def roll(Us):
        X = ca.MX(ca.DM([0, 0, 1]))
        for k in range(N):
            X = F(X, Us[k])
        return X

    if nested:
        Uin = ca.MX.sym("Uin", N)
        XN = ca.Function("rollout", [Uin], [roll(Uin)])(U)
    else:
        XN = roll(U)
    nlp = {"x": U, "f": ca.sumsqr(U) * dt, "g": ca.vertcat(XN[0], XN[1])}
    return nlp, dict(x0=0.4, lbx=-1, ubx=1, lbg=[10, 0], ubg=[10, 0])
