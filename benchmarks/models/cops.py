r"""COPS 3.0 problems in Pyomo, scalable by their discretization parameter.

Source: E. D. Dolan, J. J. Moré, T. S. Munson, "Benchmarking Optimization Software
with COPS 3.0", Argonne National Laboratory, Technical Report ANL/MCS-TM-273, Feb. 2004.
Each builder states its problem's mathematics in its docstring and discretizes it the
way the report does (trapezoidal rule for the optimal-control problems, Gauss
collocation for catmix, piecewise-linear finite elements on the uniform triangulation
for the PDE problems), so the objective at the report's sizes is the report's number.

Every problem is written as a *minimization* (a maximized quantity enters negated,
e.g. rocket minimizes ``-h(T)``); :data:`PROBLEMS` records each problem's size
parameter, a small size for tests, and the published optimal values in that
minimization form.  Those published values are the COPS 3.0 report's, as quoted
(report value, problem, size) by the test suite of MadNLP/COPSBenchmark.jl
(``test/runtests.jl``, "the value reported in http://www.mcs.anl.gov/~more/cops/cops3.pdf",
compared there at rtol 1e-4).

Boundary values and initial conditions are fixed variables (``Var.fix``), the usual
Pyomo idiom: the NL writer turns them into constants and caspar into parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


def _pyo():
    import pyomo.environ as pyo

    return pyo


# ====================================================================== polygon
def polygon(nv: int = 100):
    r"""Largest small polygon (COPS problem 1).

    The polygon of ``nv`` sides and diameter at most 1 with the largest area.
    Vertices in polar coordinates ``(r_i, θ_i)`` about the last vertex, which sits at
    the origin (``r_nv = 0, θ_nv = π``)::

        max  1/2 sum_{i=1}^{nv-1} r_{i+1} r_i sin(θ_{i+1} - θ_i)
        s.t. r_i^2 + r_j^2 - 2 r_i r_j cos(θ_i - θ_j) <= 1    (1 <= i < j <= nv)
             θ_i <= θ_{i+1},  0 <= θ_i <= π,  0 <= r_i <= 1

    minimized here as the negated area.  ``nv(nv-1)/2`` diameter constraints: the
    problem has many local maxima (the report's solvers disagree on it), so the
    tests compare caspar with IPOPT from the same start, not with the report.
    Start: ``r_i = 4 i (nv + 1 - i) / (nv + 1)^2``, ``θ_i = π i / nv``.
    """
    pyo = _pyo()
    m = pyo.ConcreteModel(name=f"polygon_{nv}")
    m.I = pyo.RangeSet(1, nv)
    m.r = pyo.Var(m.I, bounds=(0.0, 1.0), initialize=lambda _, i: 4 * i * (nv + 1 - i) / (nv + 1) ** 2)
    m.theta = pyo.Var(m.I, bounds=(0.0, math.pi), initialize=lambda _, i: math.pi * i / nv)
    m.r[nv].fix(0.0)
    m.theta[nv].fix(math.pi)
    m.P = pyo.Set(initialize=[(i, j) for i in range(1, nv) for j in range(i + 1, nv + 1)],
                  dimen=2, ordered=True)
    m.diameter = pyo.Constraint(m.P, rule=lambda m, i, j: m.r[i] ** 2 + m.r[j] ** 2
                                - 2 * m.r[i] * m.r[j] * pyo.cos(m.theta[i] - m.theta[j]) <= 1)
    m.order = pyo.Constraint(pyo.RangeSet(1, nv - 1),
                             rule=lambda m, i: m.theta[i] <= m.theta[i + 1])
    m.area = pyo.Objective(expr=-0.5 * sum(m.r[i + 1] * m.r[i] * pyo.sin(m.theta[i + 1] - m.theta[i])
                                           for i in range(1, nv)))
    return m


# ========================================================================= elec
def elec(np_: int = 50, seed: int = 2713):
    r"""Distribution of electrons on a sphere (COPS problem 2; Thomson's problem).

    ``np`` points ``p_i = (x_i, y_i, z_i)`` on the unit sphere of least Coulomb energy::

        min  sum_{1 <= i < j <= np} 1 / ||p_i - p_j||      s.t.  ||p_i||^2 = 1

    Start, as the report: uniformly random spherical angles ``θ in [0, 2π)``,
    ``φ in [0, π)`` (here NumPy's ``default_rng(seed)``); the energy landscape has
    many local minima, so the start is part of the instance.
    """
    pyo = _pyo()
    rng = np.random.default_rng(seed)
    th, ph = 2 * math.pi * rng.random(np_), math.pi * rng.random(np_)
    m = pyo.ConcreteModel(name=f"elec_{np_}")
    m.I = pyo.RangeSet(0, np_ - 1)
    m.x = pyo.Var(m.I, initialize=lambda _, i: math.cos(th[i]) * math.sin(ph[i]))
    m.y = pyo.Var(m.I, initialize=lambda _, i: math.sin(th[i]) * math.sin(ph[i]))
    m.z = pyo.Var(m.I, initialize=lambda _, i: math.cos(ph[i]))
    m.energy = pyo.Objective(expr=sum(
        ((m.x[i] - m.x[j]) ** 2 + (m.y[i] - m.y[j]) ** 2 + (m.z[i] - m.z[j]) ** 2) ** -0.5
        for i in range(np_) for j in range(i + 1, np_)))
    m.sphere = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 + m.y[i] ** 2 + m.z[i] ** 2 == 1)
    return m


# ======================================================================== chain
def chain(nh: int = 100):
    r"""Hanging chain (COPS problem 4).

    The chain of length ``L = 4`` hanging between heights ``a = 1`` (t = 0) and
    ``b = 3`` (t = 1) with least potential energy::

        min  ∫_0^1 x sqrt(1 + x'^2) dt   s.t.  ∫_0^1 sqrt(1 + x'^2) dt = L,  x(0) = a,  x(1) = b

    Trapezoidal rule on ``nh`` intervals (``h = 1/nh``), ``u = x'`` at the nodes::

        min  h/2 sum_{k<nh} (x_k sqrt(1+u_k^2) + x_{k+1} sqrt(1+u_{k+1}^2))
        s.t. x_{k+1} = x_k + h/2 (u_k + u_{k+1}),
             h/2 sum_{k<nh} (sqrt(1+u_k^2) + sqrt(1+u_{k+1}^2)) = L

    Start (the report's): ``u = 4|b-a|(t - t_min)``, ``x = 4|b-a| t (t/2 - t_min) + a``,
    ``t_min = 1/4`` (b > a).
    """
    pyo = _pyo()
    L, a, b = 4.0, 1.0, 3.0
    tmin = 0.25 if b > a else 0.75
    h = 1.0 / nh
    m = pyo.ConcreteModel(name=f"chain_{nh}")
    m.K = pyo.RangeSet(0, nh)
    m.x = pyo.Var(m.K, initialize=lambda _, k: 4 * abs(b - a) * (k / nh) * (0.5 * k / nh - tmin) + a)
    m.u = pyo.Var(m.K, initialize=lambda _, k: 4 * abs(b - a) * (k / nh - tmin))
    m.x[0].fix(a)
    m.x[nh].fix(b)
    m.s = pyo.Expression(m.K, rule=lambda m, k: pyo.sqrt(1 + m.u[k] ** 2))
    m.energy = pyo.Objective(expr=0.5 * h * sum(m.x[k] * m.s[k] + m.x[k + 1] * m.s[k + 1]
                                                for k in range(nh)))
    m.ode = pyo.Constraint(pyo.RangeSet(0, nh - 1), rule=lambda m, k:
                           m.x[k + 1] == m.x[k] + 0.5 * h * (m.u[k] + m.u[k + 1]))
    m.length = pyo.Constraint(expr=0.5 * h * sum(m.s[k] + m.s[k + 1] for k in range(nh)) == L)
    return m


# ======================================================================= robot
def robot(nh: int = 200):
    r"""Robot arm (COPS problem 8).

    Minimum time ``t_f`` to move a robot arm of length ``L = 5`` between two rest
    positions; spherical coordinates ``(ρ, θ, φ)`` of the gripper, controls ``u`` bounded
    by 1::

        min  t_f
        s.t. L ρ'' = u_ρ,  I_θ θ'' = u_θ,  I_φ φ'' = u_φ,   |u| <= 1
             I_φ = ((L-ρ)^3 + ρ^3)/3,  I_θ = I_φ sin^2 φ
             0 <= ρ <= L,  |θ| <= π,  0 <= φ <= π
             (ρ, θ, φ)(0) = (4.5, 0, π/4),  (ρ, θ, φ)(t_f) = (4.5, 2π/3, π/4),  rates 0 at both ends

    as a first-order system in ``(ρ, θ, φ, ρ', θ', φ')``, trapezoidal rule on ``nh``
    intervals of length ``t_f/nh``.  Start: ``θ = 2π/3 t^2``, ``θ' = 4π/3 t``
    (``t = k/nh``), ``ρ = 4.5``, ``φ = π/4``, the rest 0, ``t_f = 1``.
    """
    pyo = _pyo()
    L, rho0, phi0, the_f = 5.0, 4.5, math.pi / 4, 2 * math.pi / 3
    m = pyo.ConcreteModel(name=f"robot_{nh}")
    m.K = pyo.RangeSet(0, nh)
    m.rho = pyo.Var(m.K, bounds=(0, L), initialize=rho0)
    m.the = pyo.Var(m.K, bounds=(-math.pi, math.pi), initialize=lambda _, k: the_f * (k / nh) ** 2)
    m.phi = pyo.Var(m.K, bounds=(0, math.pi), initialize=phi0)
    m.rho_d = pyo.Var(m.K, initialize=0.0)
    m.the_d = pyo.Var(m.K, initialize=lambda _, k: 2 * the_f * k / nh)
    m.phi_d = pyo.Var(m.K, initialize=0.0)
    m.u_rho = pyo.Var(m.K, bounds=(-1, 1), initialize=0.0)
    m.u_the = pyo.Var(m.K, bounds=(-1, 1), initialize=0.0)
    m.u_phi = pyo.Var(m.K, bounds=(-1, 1), initialize=0.0)
    m.tf = pyo.Var(bounds=(0, None), initialize=1.0)
    for v, a, b in ((m.rho, rho0, rho0), (m.the, 0.0, the_f), (m.phi, phi0, phi0),
                    (m.rho_d, 0.0, 0.0), (m.the_d, 0.0, 0.0), (m.phi_d, 0.0, 0.0)):
        v[0].fix(a)
        v[nh].fix(b)
    m.I_phi = pyo.Expression(m.K, rule=lambda m, k: ((L - m.rho[k]) ** 3 + m.rho[k] ** 3) / 3)
    m.I_the = pyo.Expression(m.K, rule=lambda m, k: m.I_phi[k] * pyo.sin(m.phi[k]) ** 2)
    m.time = pyo.Objective(expr=m.tf)
    S = pyo.RangeSet(1, nh)

    def trap(y, dy):
        return lambda m, k: y(k) == y(k - 1) + 0.5 * m.tf / nh * (dy(k) + dy(k - 1))

    m.rho_ode = pyo.Constraint(S, rule=trap(lambda k: m.rho[k], lambda k: m.rho_d[k]))
    m.the_ode = pyo.Constraint(S, rule=trap(lambda k: m.the[k], lambda k: m.the_d[k]))
    m.phi_ode = pyo.Constraint(S, rule=trap(lambda k: m.phi[k], lambda k: m.phi_d[k]))
    m.rho_d_ode = pyo.Constraint(S, rule=trap(lambda k: m.rho_d[k], lambda k: m.u_rho[k] / L))
    m.the_d_ode = pyo.Constraint(S, rule=trap(lambda k: m.the_d[k], lambda k: m.u_the[k] / m.I_the[k]))
    m.phi_d_ode = pyo.Constraint(S, rule=trap(lambda k: m.phi_d[k], lambda k: m.u_phi[k] / m.I_phi[k]))
    return m


# ===================================================================== steering
def steering(nh: int = 200):
    r"""Particle steering (COPS problem 9).

    Minimum time for a particle under constant thrust ``a = 100`` in the direction
    ``u`` to reach height 5 with horizontal velocity 45 and vertical velocity 0::

        min  t_f
        s.t. x1' = x3,  x2' = x4,  x3' = a cos u,  x4' = a sin u,   |u| <= π/2
             x(0) = 0,  (x2, x3, x4)(t_f) = (5, 45, 0)

    trapezoidal rule on ``nh`` intervals of ``t_f/nh``.  Start: ``x2 = 5t``,
    ``x3 = 45t`` (``t = k/nh``), ``x1 = x4 = u = 0``, ``t_f = 1``.
    """
    pyo = _pyo()
    a = 100.0
    m = pyo.ConcreteModel(name=f"steering_{nh}")
    m.K = pyo.RangeSet(0, nh)
    m.u = pyo.Var(m.K, bounds=(-math.pi / 2, math.pi / 2), initialize=0.0)
    m.x1 = pyo.Var(m.K, initialize=0.0)
    m.x2 = pyo.Var(m.K, initialize=lambda _, k: 5.0 * k / nh)
    m.x3 = pyo.Var(m.K, initialize=lambda _, k: 45.0 * k / nh)
    m.x4 = pyo.Var(m.K, initialize=0.0)
    m.tf = pyo.Var(bounds=(0, None), initialize=1.0)
    for v in (m.x1, m.x2, m.x3, m.x4):
        v[0].fix(0.0)
    m.x2[nh].fix(5.0)
    m.x3[nh].fix(45.0)
    m.x4[nh].fix(0.0)
    m.time = pyo.Objective(expr=m.tf)
    S = pyo.RangeSet(1, nh)
    hh = lambda m: 0.5 * m.tf / nh  # noqa: E731
    m.ode1 = pyo.Constraint(S, rule=lambda m, k: m.x1[k] == m.x1[k - 1] + hh(m) * (m.x3[k] + m.x3[k - 1]))
    m.ode2 = pyo.Constraint(S, rule=lambda m, k: m.x2[k] == m.x2[k - 1] + hh(m) * (m.x4[k] + m.x4[k - 1]))
    m.ode3 = pyo.Constraint(S, rule=lambda m, k: m.x3[k] == m.x3[k - 1]
                            + hh(m) * (a * pyo.cos(m.u[k]) + a * pyo.cos(m.u[k - 1])))
    m.ode4 = pyo.Constraint(S, rule=lambda m, k: m.x4[k] == m.x4[k - 1]
                            + hh(m) * (a * pyo.sin(m.u[k]) + a * pyo.sin(m.u[k - 1])))
    return m


# ======================================================================= rocket
def rocket(nh: int = 400):
    r"""Goddard rocket (COPS problem 10).

    Maximize the final altitude of a vertically launched rocket (dimensionless
    units: h_0 = m_0 = g_0 = 1); altitude h, velocity v, mass m, thrust T::

        max  h(t_f)
        s.t. h' = v,  v' = (T - D(h, v))/m - g(h),  m' = -T/c
             D = D_c v^2 exp(-h_c (h - h_0)/h_0),  g = g_0 (h_0/h)^2
             0 <= T <= T_max,  h >= h_0,  v >= 0,  m_f <= m <= m_0
             h(0) = 1, v(0) = 0, m(0) = 1, m(t_f) = m_f

    with ``T_c = 3.5, h_c = 500, v_c = 620, m_c = 0.6``, ``c = 0.5 sqrt(g_0 h_0)``,
    ``m_f = m_c m_0``, ``D_c = 0.5 v_c m_0/g_0``, ``T_max = T_c m_0 g_0``; free final
    time, trapezoidal rule on ``nh`` intervals of length ``step`` (a variable).
    Minimized as ``-h(t_f)``.  Start: ``h = 1``, ``v = t(1-t)``, ``m = m_0 + (m_f-m_0)t``,
    ``T = T_max/2``, ``step = 1/nh``.
    """
    pyo = _pyo()
    h0, v0, m0, g0 = 1.0, 0.0, 1.0, 1.0
    Tc, hc, vc, mc = 3.5, 500.0, 620.0, 0.6
    c = 0.5 * math.sqrt(g0 * h0)
    mf, Dc, Tmax = mc * m0, 0.5 * vc * m0 / g0, Tc * m0 * g0
    m = pyo.ConcreteModel(name=f"rocket_{nh}")
    m.K = pyo.RangeSet(0, nh)
    m.h = pyo.Var(m.K, bounds=(h0, None), initialize=1.0)
    m.v = pyo.Var(m.K, bounds=(0, None), initialize=lambda _, k: k / nh * (1 - k / nh))
    m.m = pyo.Var(m.K, bounds=(mf, m0), initialize=lambda _, k: (mf - m0) * k / nh + m0)
    m.T = pyo.Var(m.K, bounds=(0, Tmax), initialize=Tmax / 2)
    m.step = pyo.Var(bounds=(0, None), initialize=1.0 / nh)
    m.h[0].fix(h0)
    m.v[0].fix(v0)
    m.m[0].fix(m0)
    m.m[nh].fix(mf)
    m.D = pyo.Expression(m.K, rule=lambda m, k: Dc * m.v[k] ** 2 * pyo.exp(-hc * (m.h[k] - h0) / h0))
    m.g = pyo.Expression(m.K, rule=lambda m, k: g0 * (h0 / m.h[k]) ** 2)
    m.dv = pyo.Expression(m.K, rule=lambda m, k: (m.T[k] - m.D[k] - m.m[k] * m.g[k]) / m.m[k])
    m.altitude = pyo.Objective(expr=-m.h[nh])
    S = pyo.RangeSet(1, nh)
    m.h_ode = pyo.Constraint(S, rule=lambda m, k: m.h[k] == m.h[k - 1] + 0.5 * m.step * (m.v[k] + m.v[k - 1]))
    m.v_ode = pyo.Constraint(S, rule=lambda m, k: m.v[k] == m.v[k - 1] + 0.5 * m.step * (m.dv[k] + m.dv[k - 1]))
    m.m_ode = pyo.Constraint(S, rule=lambda m, k: m.m[k] == m.m[k - 1] - 0.5 * m.step * (m.T[k] + m.T[k - 1]) / c)
    return m


# ======================================================================= glider
def glider(nh: int = 100):
    r"""Hang glider (COPS problem 11).

    Maximize the range ``x(t_f)`` of a hang glider in an updraft, lift coefficient
    ``c_L`` as the control::

        max  x(t_f)
        s.t. x' = v_x,  y' = v_y,  v_x' = (-L w/v - D v_x/v)/m,  v_y' = (L v_x/v - D w/v)/m - g
             u_a = u_c (1 - r) e^{-r},  r = (x/r_0 - 2.5)^2,  w = v_y - u_a,
             v = sqrt(v_x^2 + w^2),  D = 1/2 (c_0 + c_1 c_L^2) ρ S v^2,  L = 1/2 c_L ρ S v^2
             0 <= c_L <= 1.4,  x, v_x >= 0,  t_f >= 0
             x(0) = 0, y(0) = 1000, y(t_f) = 900, v_x(0) = v_x(t_f) = 13.23, v_y(0) = v_y(t_f) = -1.288

    ``u_c = 2.5, r_0 = 100, m = 100, g = 9.81, c_0 = 0.034, c_1 = 0.069662, S = 14,
    ρ = 1.13``; trapezoidal rule on ``nh`` intervals of ``t_f/nh``; minimized as
    ``-x(t_f)``.  Start: ``t_f = 1``, ``x = 13.23 t``, ``y = 1000 - 100 t``,
    ``v_x = 13.23``, ``v_y = -1.288``, ``c_L = 0.7``.
    """
    pyo = _pyo()
    x0, y0, yf, vx0, vxf, vy0, vyf = 0.0, 1000.0, 900.0, 13.23, 13.23, -1.288, -1.288
    uc, r0, mass, grav = 2.5, 100.0, 100.0, 9.81
    c0, c1, S, rho, cLmax = 0.034, 0.069662, 14.0, 1.13, 1.4
    m = pyo.ConcreteModel(name=f"glider_{nh}")
    m.K = pyo.RangeSet(0, nh)
    m.tf = pyo.Var(bounds=(0, None), initialize=1.0)
    m.x = pyo.Var(m.K, bounds=(0, None), initialize=lambda _, k: x0 + vx0 * k / nh)
    m.y = pyo.Var(m.K, initialize=lambda _, k: y0 + k / nh * (yf - y0))
    m.vx = pyo.Var(m.K, bounds=(0, None), initialize=vx0)
    m.vy = pyo.Var(m.K, initialize=vy0)
    m.cL = pyo.Var(m.K, bounds=(0, cLmax), initialize=cLmax / 2)
    m.x[0].fix(x0)
    m.y[0].fix(y0)
    m.y[nh].fix(yf)
    m.vx[0].fix(vx0)
    m.vx[nh].fix(vxf)
    m.vy[0].fix(vy0)
    m.vy[nh].fix(vyf)
    m.r = pyo.Expression(m.K, rule=lambda m, k: (m.x[k] / r0 - 2.5) ** 2)
    m.w = pyo.Expression(m.K, rule=lambda m, k: m.vy[k] - uc * (1 - m.r[k]) * pyo.exp(-m.r[k]))
    m.v = pyo.Expression(m.K, rule=lambda m, k: pyo.sqrt(m.vx[k] ** 2 + m.w[k] ** 2))
    m.D = pyo.Expression(m.K, rule=lambda m, k: 0.5 * (c0 + c1 * m.cL[k] ** 2) * rho * S * m.v[k] ** 2)
    m.L = pyo.Expression(m.K, rule=lambda m, k: 0.5 * m.cL[k] * rho * S * m.v[k] ** 2)
    m.ax = pyo.Expression(m.K, rule=lambda m, k: (-m.L[k] * (m.w[k] / m.v[k])
                                                   - m.D[k] * (m.vx[k] / m.v[k])) / mass)
    m.ay = pyo.Expression(m.K, rule=lambda m, k: (m.L[k] * (m.vx[k] / m.v[k])
                                                   - m.D[k] * (m.w[k] / m.v[k])) / mass - grav)
    m.range = pyo.Objective(expr=-m.x[nh])
    Sx = pyo.RangeSet(1, nh)
    hh = lambda m: 0.5 * m.tf / nh  # noqa: E731
    m.x_ode = pyo.Constraint(Sx, rule=lambda m, k: m.x[k] == m.x[k - 1] + hh(m) * (m.vx[k] + m.vx[k - 1]))
    m.y_ode = pyo.Constraint(Sx, rule=lambda m, k: m.y[k] == m.y[k - 1] + hh(m) * (m.vy[k] + m.vy[k - 1]))
    m.vx_ode = pyo.Constraint(Sx, rule=lambda m, k: m.vx[k] == m.vx[k - 1] + hh(m) * (m.ax[k] + m.ax[k - 1]))
    m.vy_ode = pyo.Constraint(Sx, rule=lambda m, k: m.vy[k] == m.vy[k - 1] + hh(m) * (m.ay[k] + m.ay[k - 1]))
    return m


# ======================================================================= catmix
#: Gauss-Legendre points on [0, 1] (3-stage collocation)
_GAUSS3 = (0.5 - math.sqrt(15) / 10, 0.5, 0.5 + math.sqrt(15) / 10)


def catmix(nh: int = 100):
    r"""Catalyst mixing (COPS problem 14).

    The mixing policy ``u(t)`` of two catalysts along a tubular plug-flow reactor that
    maximizes the yield of the product::

        min  -1 + x1(1) + x2(1)
        s.t. x1' = u (10 x2 - x1),  x2' = u (x1 - 10 x2) - (1 - u) x2,  0 <= u <= 1
             x(0) = (1, 0)

    Collocation at the 3 Gauss points ``ρ_k`` of each of ``nh`` intervals (``h = 1/nh``):
    on interval i the state is the polynomial ``x(t_i + ρ h) = v_i + h sum_{j=1}^3 w_ij ρ^j/j!``
    (``v_i``: the state at ``t_i``), so at the collocation points
    ``x_ik = v_i + h sum_j w_ij ρ_k^j/j!`` and ``x'_ik = sum_j w_ij ρ_k^{j-1}/(j-1)!``;
    the ODE holds at every collocation point with its own control ``u_ik``, and the
    state is continuous, ``v_{i+1} = v_i + h sum_j w_ij/j!``.  The stage values and
    derivatives are Pyomo Expressions (linear in v, w).  Start: ``u = 0, v = (1, 0), w = 0``.
    """
    pyo = _pyo()
    h = 1.0 / nh
    rho = _GAUSS3
    fact = [1, 1, 2, 6]
    m = pyo.ConcreteModel(name=f"catmix_{nh}")
    m.I = pyo.RangeSet(0, nh - 1)
    m.C = pyo.RangeSet(0, 2)          # collocation points / polynomial terms
    m.S = pyo.RangeSet(0, 1)          # the two states
    m.u = pyo.Var(m.I, m.C, bounds=(0, 1), initialize=0.0)
    m.v = pyo.Var(m.I, m.S, initialize=lambda _, i, s: 1.0 if s == 0 else 0.0)
    m.w = pyo.Var(m.I, m.C, m.S, initialize=0.0)
    m.v[0, 0].fix(1.0)
    m.v[0, 1].fix(0.0)
    m.xc = pyo.Expression(m.I, m.C, m.S, rule=lambda m, i, k, s: m.v[i, s] + h * sum(
        m.w[i, j, s] * rho[k] ** (j + 1) / fact[j + 1] for j in range(3)))
    m.dxc = pyo.Expression(m.I, m.C, m.S, rule=lambda m, i, k, s: sum(
        m.w[i, j, s] * rho[k] ** j / fact[j] for j in range(3)))
    m.end = pyo.Expression(m.S, rule=lambda m, s: m.v[nh - 1, s] + h * sum(
        m.w[nh - 1, j, s] / fact[j + 1] for j in range(3)))
    m.yield_ = pyo.Objective(expr=-1.0 + m.end[0] + m.end[1])
    m.continuity = pyo.Constraint(pyo.RangeSet(0, nh - 2), m.S, rule=lambda m, i, s: m.v[i + 1, s]
                                  == m.v[i, s] + h * sum(m.w[i, j, s] / fact[j + 1] for j in range(3)))
    m.ode1 = pyo.Constraint(m.I, m.C, rule=lambda m, i, k: m.dxc[i, k, 0]
                            == m.u[i, k] * (10 * m.xc[i, k, 1] - m.xc[i, k, 0]))
    m.ode2 = pyo.Constraint(m.I, m.C, rule=lambda m, i, k: m.dxc[i, k, 1]
                            == m.u[i, k] * (m.xc[i, k, 0] - 10 * m.xc[i, k, 1])
                            - (1 - m.u[i, k]) * m.xc[i, k, 1])
    return m


# ============================================================== PDE problems
def _grid(nx, ny, lx, ly):
    return lx / (nx + 1), ly / (ny + 1)


def torsion(nx: int = 50, ny: int | None = None, c: float = 5.0):
    r"""Elastic-plastic torsion (COPS problem 15; MINPACK-2).

    The stress potential of an infinitely long bar of unit square cross-section
    ``D = (0,1)^2`` under torsion (angle of twist per unit length ``c = 5``)::

        min  ∫_D { 1/2 ||∇v||^2 - c v } dx     s.t.  |v(x)| <= dist(x, ∂D)

    Piecewise-linear finite elements on the uniform triangulation of ``nx x ny``
    interior points (``hx = 1/(nx+1)``, ``hy = 1/(ny+1)``): each grid cell splits into
    a lower triangle ``(i,j), (i+1,j), (i,j+1)`` and an upper triangle
    ``(i,j), (i-1,j), (i,j-1)`` of area ``hx hy/2``, on which ``∇v`` is constant and
    ``v`` integrates to the area times the mean of its three vertex values::

        q(v) = hx hy/2 [ 1/2 sum_{L,U} ||∇v||^2 - c/3 sum_{L,U} (v_1 + v_2 + v_3) ]

    ``v = 0`` on the boundary (fixed); interior bounds ``±dist``; start ``v = dist``.
    """
    pyo = _pyo()
    ny = nx if ny is None else ny
    hx, hy = _grid(nx, ny, 1.0, 1.0)
    dist = {(i, j): min(min(i, nx - i + 1) * hx, min(j, ny - j + 1) * hy)
            for i in range(nx + 2) for j in range(ny + 2)}
    m = pyo.ConcreteModel(name=f"torsion_{nx}x{ny}")
    m.X, m.Y = pyo.RangeSet(0, nx + 1), pyo.RangeSet(0, ny + 1)
    m.v = pyo.Var(m.X, m.Y, bounds=lambda _, i, j: (-dist[i, j], dist[i, j]),
                  initialize=lambda _, i, j: dist[i, j])
    _fix_boundary(m.v, nx, ny, lambda i, j: 0.0)
    v = m.v
    area = 0.5 * hx * hy
    lower = [(((v[i + 1, j] - v[i, j]) / hx) ** 2 + ((v[i, j + 1] - v[i, j]) / hy) ** 2,
              v[i + 1, j] + v[i, j] + v[i, j + 1]) for i in range(nx + 1) for j in range(ny + 1)]
    upper = [(((v[i, j] - v[i - 1, j]) / hx) ** 2 + ((v[i, j] - v[i, j - 1]) / hy) ** 2,
              v[i, j] + v[i - 1, j] + v[i, j - 1]) for i in range(1, nx + 2) for j in range(1, ny + 2)]
    m.stress = pyo.Objective(expr=sum(area * (0.5 * q - c / 3 * s) for q, s in lower + upper))
    return m


def _fix_boundary(var, nx, ny, value):
    for i in range(nx + 2):
        for j in (0, ny + 1):
            var[i, j].fix(value(i, j))
    for j in range(1, ny + 1):
        for i in (0, nx + 1):
            var[i, j].fix(value(i, j))


def bearing(nx: int = 50, ny: int | None = None, b: float = 10.0, ecc: float = 0.1,
            weights: str = "cops"):
    r"""Pressure distribution in a journal bearing (COPS problem 16; MINPACK-2).

    On ``D = (0, 2π) x (0, 2b)``, with ``w_q(x) = (1 + ε cos x)^3`` and
    ``w_l(x) = ε sin x`` (``b = 10``, eccentricity ``ε = 0.1``)::

        min  ∫_D { 1/2 w_q ||∇v||^2 - w_l v } dx     s.t.  v >= 0,  v = 0 on ∂D

    Piecewise-linear elements on the triangulation of ``torsion`` (``hx = 2π/(nx+1)``,
    ``hy = 2b/(ny+1)``, triangles of area ``hx hy/2`` with constant ``∇v``); the
    linear term is lumped at the nodes (weight ``hx hy`` each) and ``w_q`` on a
    triangle is a weighted sum of its values at the triangle's grid columns::

        q(v) = hx hy/12 [ sum_L α_i ||∇v||^2 + sum_U β_i ||∇v||^2 ] - hx hy sum_{i,j} w_l(x_i) v_ij

    ``weights='fe'``: the vertex means, ``α_i = 2 w_q,i + w_q,i+1`` on the lower triangle
    at (i, j) (vertices in columns i, i+1, i) and ``β_i = 2 w_q,i + w_q,i-1`` on the
    upper one.  ``weights='cops'`` (default): ``α_i = w_q,i + 2 w_q,i+1``,
    ``β_i = 2 w_q,i + 2 w_q,i-1`` -- not the vertex means (β carries weight 4), but
    the discretization that produced the report's value -0.15482 at nx = ny = 50 (the
    'fe' weights give -0.18049 there; checked with IPOPT).  Start ``v = max(sin x, 0)``.
    """
    pyo = _pyo()
    ny = nx if ny is None else ny
    hx, hy = _grid(nx, ny, 2 * math.pi, 2 * b)
    wq = [(1 + ecc * math.cos(i * hx)) ** 3 for i in range(nx + 2)]
    wl = [ecc * math.sin(i * hx) for i in range(nx + 2)]
    if weights == "cops":
        alpha = [wq[i] + 2 * wq[i + 1] for i in range(nx + 1)]
        beta = [None] + [2 * wq[i] + 2 * wq[i - 1] for i in range(1, nx + 2)]
    elif weights == "fe":
        alpha = [2 * wq[i] + wq[i + 1] for i in range(nx + 1)]
        beta = [None] + [2 * wq[i] + wq[i - 1] for i in range(1, nx + 2)]
    else:
        raise ValueError(f"weights must be 'cops' or 'fe', not {weights!r}")
    m = pyo.ConcreteModel(name=f"bearing_{nx}x{ny}")
    m.X, m.Y = pyo.RangeSet(0, nx + 1), pyo.RangeSet(0, ny + 1)
    m.v = pyo.Var(m.X, m.Y, bounds=(0, None), initialize=lambda _, i, j: max(math.sin(i * hx), 0.0))
    _fix_boundary(m.v, nx, ny, lambda i, j: 0.0)
    v = m.v
    k = hx * hy / 12
    quad = [k * alpha[i] * (((v[i + 1, j] - v[i, j]) / hx) ** 2 + ((v[i, j + 1] - v[i, j]) / hy) ** 2)
            for i in range(nx + 1) for j in range(ny + 1)]
    quad += [k * beta[i] * (((v[i, j] - v[i - 1, j]) / hx) ** 2 + ((v[i, j] - v[i, j - 1]) / hy) ** 2)
             for i in range(1, nx + 2) for j in range(1, ny + 2)]
    lin = [hx * hy * wl[i] * v[i, j] for i in range(1, nx + 1) for j in range(1, ny + 1) if wl[i] != 0]
    m.energy = pyo.Objective(expr=sum(quad) - sum(lin))
    return m


def minsurf(nx: int = 50, ny: int | None = None):
    r"""Minimal surface with obstacle (COPS problem 17).

    The surface ``v`` over the unit square of least area, above the obstacle
    ``v >= 1`` on ``[1/4, 3/4]^2``, with ``v = 1 - (2x - 1)^2`` on the edges y = 0 and
    y = 1 and ``v = 0`` on x = 0 and x = 1::

        min  ∫_D sqrt(1 + ||∇v||^2) dx

    Piecewise-linear elements on the triangulation of ``torsion``
    (``hx = 1/(nx+1), hy = 1/(ny+1)``): each triangle contributes its area
    ``hx hy/2`` times ``sqrt(1 + ||∇v||^2)``.  The obstacle is imposed at the grid points
    of the index box ``floor(1/(4 hx)) <= i <= ceil(3/(4 hx))`` (likewise in j) -- the
    report's discretization, which slightly enlarges the square when the grid does not
    hit 1/4 and 3/4 -- and ``v >= 0`` everywhere.  Start ``v = 1 - (2x - 1)^2``.
    """
    pyo = _pyo()
    ny = nx if ny is None else ny
    hx, hy = _grid(nx, ny, 1.0, 1.0)
    edge = [1 - (2 * i * hx - 1) ** 2 for i in range(nx + 2)]
    ilo, ihi = math.floor(0.25 / hx), math.ceil(0.75 / hx)
    jlo, jhi = math.floor(0.25 / hy), math.ceil(0.75 / hy)

    def lb(_, i, j):
        return 1.0 if (ilo <= i <= ihi and jlo <= j <= jhi) else 0.0

    m = pyo.ConcreteModel(name=f"minsurf_{nx}x{ny}")
    m.X, m.Y = pyo.RangeSet(0, nx + 1), pyo.RangeSet(0, ny + 1)
    m.v = pyo.Var(m.X, m.Y, bounds=lambda _, i, j: (lb(_, i, j), None),
                  initialize=lambda _, i, j: max(edge[i], lb(_, i, j)))
    _fix_boundary(m.v, nx, ny, lambda i, j: edge[i] if j in (0, ny + 1) else 0.0)
    v = m.v
    area = 0.5 * hx * hy
    tri = [pyo.sqrt(1 + ((v[i + 1, j] - v[i, j]) / hx) ** 2 + ((v[i, j + 1] - v[i, j]) / hy) ** 2)
           for i in range(nx + 1) for j in range(ny + 1)]
    tri += [pyo.sqrt(1 + ((v[i - 1, j] - v[i, j]) / hx) ** 2 + ((v[i, j - 1] - v[i, j]) / hy) ** 2)
            for i in range(1, nx + 2) for j in range(1, ny + 2)]
    m.area = pyo.Objective(expr=sum(area * t for t in tri))
    return m


# ===================================================================== registry
@dataclass(frozen=True)
class CopsProblem:
    """One COPS problem: its builder, the meaning of its size argument, a small size
    for tests, and the report's optimal values (minimization form) by size (final)."""

    name: str
    number: int                 # the report's problem number
    build: Callable
    size: str                   # what the size argument counts
    small: int
    published: dict = field(default_factory=dict)   # size -> objective (minimized)
    note: str = ""

    def __call__(self, size=None, **kw):
        return self.build(self.small if size is None else size, **kw)


PROBLEMS: dict = {p.name: p for p in (
    CopsProblem("polygon", 1, polygon, "nv (vertices)", 10,
                note="many local optima; compared with IPOPT only"),
    CopsProblem("elec", 2, elec, "np (electrons)", 10,
                published={50: 1.0552e3}),
    CopsProblem("chain", 4, chain, "nh (intervals)", 50,
                published={200: 5.06891}),
    CopsProblem("robot", 8, robot, "nh (intervals)", 50,
                published={200: 9.14138}),
    CopsProblem("steering", 9, steering, "nh (intervals)", 50,
                published={200: 5.54577e-1}),
    CopsProblem("rocket", 10, rocket, "nh (intervals)", 50,
                published={400: -1.01283}, note="report: max h(t_f) = 1.01283"),
    CopsProblem("glider", 11, glider, "nh (intervals)", 50,
                published={100: -1.25505e3}, note="report: max x(t_f) = 1.25505e3"),
    CopsProblem("catmix", 14, catmix, "nh (intervals)", 20,
                published={100: -4.80556e-2}),
    CopsProblem("torsion", 15, torsion, "nx = ny (interior grid points)", 10,
                published={50: -4.18087e-1}),
    CopsProblem("bearing", 16, bearing, "nx = ny (interior grid points)", 10,
                published={50: -1.5482e-1}),
    CopsProblem("minsurf", 17, minsurf, "nx = ny (interior grid points)", 10,
                published={50: 2.51488}, note="also (nx, ny) = (50, 75): 2.50568, (50, 100): 2.50694"),
)}

#: published values of non-square grids: (problem, nx, ny) -> objective
PUBLISHED_GRIDS = {("minsurf", 50, 50): 2.51488, ("minsurf", 50, 75): 2.50568,
                   ("minsurf", 50, 100): 2.50694, ("torsion", 50, 50): -4.18087e-1,
                   ("bearing", 50, 50): -1.5482e-1}


def published_digits(value: float) -> int:
    """Significant digits of a published value as written in :data:`PROBLEMS`."""
    s = f"{value!r}".lower().split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return max(len(s), 1)


def matches_published(value: float, published: float, exact: bool = False) -> bool:
    """Does an optimal value agree with the report's?

    ``exact``: ``value`` rounds to the published number at its printed significant
    digits.  Otherwise: that, or a relative difference of at most 1e-5.  The looser test is the
    honest one for most problems: at IPOPT's tol = 1e-8 our objectives at the
    report's sizes differ from its 6-digit values by 1.4e-6 (chain) to 6.9e-6
    (glider) relative -- consistent with the report's solvers stopping at looser
    tolerances -- while elec (50), steering (200) and bearing (50) agree to every
    printed digit."""
    if not math.isfinite(value):
        return False
    d = published_digits(published)
    if float(f"{value:.{d - 1}e}") == published:
        return True
    return not exact and abs(value - published) <= 1e-5 * abs(published)
