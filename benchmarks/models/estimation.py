"""Parameter estimation by shooting: the system of CasADi's system-identification example.

A mass-spring-damper with a cubic spring, ``M y'' + c y' + k y + k_NL y^3 = u``,
sampled at ``fs`` = 610.1 Hz with 10 RK4 steps per sample (one CasADi ``Function``
per sample, built from nested calls).  Measurements are simulated at the true
parameters (noise-free, so the fit is exact); the unknowns are the four parameters,
scaled by ``SCALE`` (the true values are ``TRUTH * SCALE``).

* ``multiple``: every sample's state is a variable, the sample function mapped over
  them (``one_sample.map(N)``, arguments ``X``, the input and
  ``repmat(params * scale)``); ``f = 0.5 |y_data - y|^2`` and the continuity gaps
  ``g = 0``;
* ``single``: only the parameters, the trajectory by ``one_sample.mapaccum(N)`` from a
  known initial state; ``f`` as above, no constraints.

:func:`estimation_nlp` returns ``(nlp, args)`` for ``nlpsol`` and its call.
"""

from __future__ import annotations

import numpy as np

FS = 610.1
STEPS_PER_SAMPLE = 10
SCALE = np.array([1e-6, 1e-4, 1.0, 1.0])
TRUTH = np.array([5.625, 2.3, 1.0, 4.69])
GUESS = np.array([5.0, 2.0, 1.0, 5.0])


def sample_function():
    """``one_sample(state (2,), u, params (4,))``: one sample of 10 RK4 steps."""
    import casadi as ca

    s, u, p = ca.MX.sym("s", 2), ca.MX.sym("u"), ca.MX.sym("p", 4)
    rhs = ca.vertcat(s[1], (u - p[3] * s[0] ** 3 - p[2] * s[0] - p[1] * s[1]) / p[0])
    ode = ca.Function("ode", [s, u, p], [rhs])
    dt = 1.0 / FS / STEPS_PER_SAMPLE
    k1 = ode(s, u, p)
    k2 = ode(s + dt / 2 * k1, u, p)
    k3 = ode(s + dt / 2 * k2, u, p)
    k4 = ode(s + dt * k3, u, p)
    one_step = ca.Function("one_step", [s, u, p], [s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)])
    X = s
    for _ in range(STEPS_PER_SAMPLE):
        X = one_step(X, u, p)
    return ca.Function("one_sample", [s, u, p], [X])


def estimation_nlp(N: int = 2000, shooting: str = "multiple", seed: int = 0):
    """``(nlp, args)``: the estimation problem over N samples (module docstring)."""
    import casadi as ca

    one_sample = sample_function()
    rng = np.random.default_rng(seed)
    u_data = ca.DM(0.1 * rng.random(N)).T
    X_meas = one_sample.mapaccum("all_samples", N)(ca.DM([0.0, 0.0]), u_data,
                                                   ca.repmat(ca.DM(TRUTH * SCALE), 1, N))
    y_data = X_meas[0, :].T
    params = ca.MX.sym("params", 4)
    scale = ca.DM(SCALE)
    if shooting == "single":
        sim = one_sample.mapaccum("all_samples", N)(ca.DM([0.0, 0.0]), u_data,
                                                     ca.repmat(params * scale, 1, N))
        e = y_data - sim[0, :].T
        return {"x": params, "f": 0.5 * ca.dot(e, e)}, dict(x0=GUESS)
    if shooting != "multiple":
        raise ValueError(f"shooting={shooting!r}: 'multiple' or 'single'")
    X = ca.MX.sym("X", 2, N)
    Xn = one_sample.map(N)(X, u_data, ca.repmat(params * scale, 1, N))
    e = y_data - Xn[0, :].T
    nlp = {"x": ca.veccat(params, X), "f": 0.5 * ca.dot(e, e),
           "g": ca.vec(Xn[:, :-1] - X[:, 1:])}
    yd = np.diff(np.asarray(y_data).ravel()) * FS
    X_guess = np.vstack([np.asarray(y_data).ravel(), np.r_[yd, yd[-1]]])
    return nlp, dict(x0=np.r_[GUESS, X_guess.ravel(order="F")], lbg=0.0, ubg=0.0)
