r"""Polar AC optimal power flow, as PGLib-OPF's MODEL documentation states it.

Data (per unit on ``baseMVA``; angles in radians), after :func:`acopf_data`:

* buses ``i in N`` with demand ``S^d_i = p^d_i + j q^d_i``, shunt ``Y^s_i = g^s_i + j b^s_i``,
  voltage bounds ``v^l_i <= |V_i| <= v^u_i``; one reference bus ``r``;
* generators ``k in G`` (in service) at bus ``i(k)`` with ``p^l_k <= p^g_k <= p^u_k``,
  ``q^l_k <= q^g_k <= q^u_k`` and cost ``c_k(P) = sum_d c_{kd} P^d`` ($/h, P in MW);
* branches ``(i, j) in E`` (in service; i = from, j = to) with series admittance
  ``Y = 1/(r + j x) = g + j b``, total line charging ``b^c``, complex tap
  ``T = tau e^{j sigma}`` (``tau = 1`` where the file says 0), thermal limit ``s^u``
  (``rate_a``; none where it is 0) and angle-difference bounds
  ``theta^{Δl} <= theta_i - theta_j <= theta^{Δu}``.

Variables ``V_i = v_i e^{j theta_i}`` (polar: ``vm, va``), ``S^g_k = p^g_k + j q^g_k``,
and the flows at both ends of every branch ``S_ij = p_ij + j q_ij``, ``S_ji``::

    min   sum_k c_k(baseMVA * p^g_k)
    s.t.  theta_r = 0
          sum_{k in G_i} p^g_k - p^d_i - g^s_i v_i^2 = sum_{(i,j) in E_i u E_i^R} p_ij     (i in N)
          sum_{k in G_i} q^g_k - q^d_i + b^s_i v_i^2 = sum_{(i,j) in E_i u E_i^R} q_ij     (i in N)
          p_ij =  g/tau^2 v_i^2            - v_i v_j/tau (g cos(θ_ij - σ) + b sin(θ_ij - σ))
          q_ij = -(b + b^c/2)/tau^2 v_i^2  - v_i v_j/tau (g sin(θ_ij - σ) - b cos(θ_ij - σ))
          p_ji =  g v_j^2                  - v_i v_j/tau (g cos(θ_ji + σ) + b sin(θ_ji + σ))
          q_ji = -(b + b^c/2) v_j^2        - v_i v_j/tau (g sin(θ_ji + σ) - b cos(θ_ji + σ))
          p_ij^2 + q_ij^2 <= (s^u)^2,  p_ji^2 + q_ji^2 <= (s^u)^2         (where s^u > 0)
          theta^{Δl} <= theta_i - theta_j <= theta^{Δu}
          v^l <= v <= v^u,  p^l <= p^g <= p^u,  q^l <= q^g <= q^u

with ``θ_ij = θ_i - θ_j = -θ_ji``.  The flow equations are the real and imaginary parts
of the MODEL's π-model ``S_ij = (Y^* - j b^c/2)|V_i|^2/|T|^2 - Y^* V_i V_j^*/T`` and
``S_ji = (Y^* - j b^c/2)|V_j|^2 - Y^* V_i^* V_j / T^*``; the shunt enters the balance as
PowerModels.jl (which produced BASELINE.md) writes it: ``-g^s v^2`` in P, ``+b^s v^2`` in Q.

Data conventions (PowerModels' MATPOWER import, so objectives match BASELINE.md):
out-of-service generators (status 0) and branches (status 0) and isolated buses (type 4)
are dropped; an angle bound at or beyond ±90° is replaced by ±60° (PowerModels'
``correct_voltage_angle_differences!``; PGLib v23.07 has none); costs stay polynomial
in MW, so the per-unit objective is ``sum_d c_d baseMVA^d (p^g)^d``.

Start (flat, as PGLib/MATPOWER): ``v = 1`` (the midpoint of the bounds where 1 is
outside them), ``theta = 0``, ``p^g, q^g`` at the midpoints of their bounds, flows
evaluated from the flow equations at that voltage.

Variable order (both front-ends): ``vm[0:nb], va[0:nb], pg[0:ng], qg[0:ng],
p_fr[0:nl], q_fr[0:nl], p_to[0:nl], q_to[0:nl]``.  Constraint order of the CasADi
problem: ``[va_ref, p_balance(nb), q_balance(nb), p_fr(nl), q_fr(nl), p_to(nl),
q_to(nl), thermal_fr(nr), thermal_to(nr), angle_diff(nl)]`` (nr: branches with a
rating).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import matpower as mp


@dataclass(frozen=True)
class ACOPFData:
    """A case in per unit, ready to state the AC-OPF (final).  Index arrays are
    0-based positions into the kept buses / generators / branches."""

    name: str
    baseMVA: float
    ref: int                  # position of the reference bus
    # buses (nb)
    pd: np.ndarray
    qd: np.ndarray
    gs: np.ndarray
    bs: np.ndarray
    vmin: np.ndarray
    vmax: np.ndarray
    bus_ids: np.ndarray       # the file's bus numbers
    # generators (ng)
    gen_bus: np.ndarray
    pmin: np.ndarray
    pmax: np.ndarray
    qmin: np.ndarray
    qmax: np.ndarray
    cost: tuple               # per generator: coefficients on per-unit p^g, lowest degree first
    # branches (nl)
    f: np.ndarray
    t: np.ndarray
    g: np.ndarray
    b: np.ndarray
    bc: np.ndarray
    tau: np.ndarray
    shift: np.ndarray
    rate_a: np.ndarray        # 0 where unlimited
    angmin: np.ndarray
    angmax: np.ndarray

    nb = property(lambda self: self.pd.size)
    ng = property(lambda self: self.pmin.size)
    nl = property(lambda self: self.f.size)

    @property
    def rated(self) -> np.ndarray:
        """Positions of the branches with a thermal limit."""
        return np.flatnonzero(self.rate_a > 0)

    @property
    def n(self) -> int:
        return 2 * self.nb + 2 * self.ng + 4 * self.nl

    @property
    def m(self) -> int:
        return 1 + 2 * self.nb + 4 * self.nl + 2 * self.rated.size + self.nl


#: PowerModels replaces angle-difference bounds at or beyond ±90° by ±60°
_ANG_LIMIT = np.pi / 2
_ANG_DEFAULT = np.pi / 3


def acopf_data(case) -> ACOPFData:
    """Per-unit AC-OPF data of a :class:`~.matpower.MatpowerCase` (or a PGLib case
    name, loaded with :func:`~.matpower.load_pglib`)."""
    if isinstance(case, str):
        case = mp.load_pglib(case)
    base = case.baseMVA
    bus = case.bus[case.bus[:, mp.BUS_TYPE] != mp.NONE_BUS]
    ids = bus[:, mp.BUS_I].astype(np.int64)
    pos = {int(b): k for k, b in enumerate(ids)}

    gon = case.gen[:, mp.GEN_STATUS] > 0
    gon &= np.array([int(b) in pos for b in case.gen[:, mp.GEN_BUS]], dtype=bool)
    costs = mp.polynomial_costs(case)
    gen = case.gen[gon]
    cost = tuple(c * base ** np.arange(c.size) for c, on in zip(costs, gon) if on)

    br = case.branch
    bon = (br[:, mp.BR_STATUS] > 0) & np.array(
        [int(a) in pos and int(b) in pos for a, b in br[:, [mp.F_BUS, mp.T_BUS]]], dtype=bool)
    br = br[bon]
    r, x = br[:, mp.BR_R], br[:, mp.BR_X]
    z2 = r * r + x * x
    if np.any(z2 == 0):
        raise ValueError(f"{case.name}: branch with zero impedance")
    tau = np.where(br[:, mp.TAP] == 0, 1.0, br[:, mp.TAP])
    angmin = np.deg2rad(br[:, mp.ANGMIN])
    angmax = np.deg2rad(br[:, mp.ANGMAX])
    angmin = np.where(angmin <= -_ANG_LIMIT, -_ANG_DEFAULT, angmin)
    angmax = np.where(angmax >= _ANG_LIMIT, _ANG_DEFAULT, angmax)

    refs = np.flatnonzero(bus[:, mp.BUS_TYPE] == mp.REF_BUS)
    if refs.size != 1:
        raise ValueError(f"{case.name}: {refs.size} reference buses, expected one")

    return ACOPFData(
        name=case.name, baseMVA=base, ref=int(refs[0]),
        pd=bus[:, mp.PD] / base, qd=bus[:, mp.QD] / base,
        gs=bus[:, mp.GS] / base, bs=bus[:, mp.BS] / base,
        vmin=bus[:, mp.VMIN].copy(), vmax=bus[:, mp.VMAX].copy(), bus_ids=ids,
        gen_bus=np.array([pos[int(b)] for b in gen[:, mp.GEN_BUS]], dtype=np.int64),
        pmin=gen[:, mp.PMIN] / base, pmax=gen[:, mp.PMAX] / base,
        qmin=gen[:, mp.QMIN] / base, qmax=gen[:, mp.QMAX] / base, cost=cost,
        f=np.array([pos[int(b)] for b in br[:, mp.F_BUS]], dtype=np.int64),
        t=np.array([pos[int(b)] for b in br[:, mp.T_BUS]], dtype=np.int64),
        g=r / z2, b=-x / z2, bc=br[:, mp.BR_B].copy(), tau=tau,
        shift=np.deg2rad(br[:, mp.SHIFT]), rate_a=br[:, mp.RATE_A] / base,
        angmin=angmin, angmax=angmax)


# ----------------------------------------------------------------- shared maths
def branch_flows(d: ACOPFData, vm, va, xp):
    """``(p_fr, q_fr, p_to, q_to)`` of every branch at voltages ``vm, va``.

    ``xp`` supplies ``cos``/``sin`` (``numpy`` or ``casadi``); ``vm, va`` are arrays
    or SX vectors indexable by the integer arrays ``d.f``, ``d.t``."""
    f, t = (d.f, d.t) if xp is np else (d.f.tolist(), d.t.tolist())
    vf, vt = vm[f], vm[t]
    dfr = va[f] - va[t] - d.shift     # θ_ij - σ
    dto = va[t] - va[f] + d.shift     # θ_ji + σ
    w = vf * vt / d.tau
    bsh = d.b + d.bc / 2
    p_fr = d.g / d.tau ** 2 * vf ** 2 - w * (d.g * xp.cos(dfr) + d.b * xp.sin(dfr))
    q_fr = -bsh / d.tau ** 2 * vf ** 2 - w * (d.g * xp.sin(dfr) - d.b * xp.cos(dfr))
    p_to = d.g * vt ** 2 - w * (d.g * xp.cos(dto) + d.b * xp.sin(dto))
    q_to = -bsh * vt ** 2 - w * (d.g * xp.sin(dto) - d.b * xp.cos(dto))
    return p_fr, q_fr, p_to, q_to


def flat_start(d: ACOPFData) -> dict:
    """The flat start: ``{'vm', 'va', 'pg', 'qg', 'p_fr', 'q_fr', 'p_to', 'q_to'}``."""
    vm = np.where((d.vmin <= 1.0) & (1.0 <= d.vmax), 1.0, 0.5 * (d.vmin + d.vmax))
    va = np.zeros(d.nb)
    p_fr, q_fr, p_to, q_to = branch_flows(d, vm, va, np)
    return dict(vm=vm, va=va, pg=0.5 * (d.pmin + d.pmax), qg=0.5 * (d.qmin + d.qmax),
                p_fr=p_fr, q_fr=q_fr, p_to=p_to, q_to=q_to)


def objective_value(d: ACOPFData, pg) -> float:
    """``sum_k c_k(baseMVA pg_k)`` in $/h for per-unit outputs ``pg``."""
    return float(sum(np.polyval(c[::-1], p) for c, p in zip(d.cost, np.asarray(pg))))


def _incidence(rows, nrows, ncols):
    """Sparse 0/1 matrix with a one at (rows[k], k)."""
    import scipy.sparse as sp

    return sp.csc_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))),
                         shape=(nrows, ncols))


# -------------------------------------------------------------------- CasADi
def acopf_casadi(case):
    """The AC-OPF as a CasADi SX problem: ``(nlp, args)``.

    ``nlp = {'x', 'f', 'g'}`` for ``casadi.nlpsol``; ``args`` holds ``x0, lbx, ubx, lbg,
    ubg`` (see the module docstring for the orders).  The branch equations are written
    once on vectors (every branch's flow is the same expression over its own data), the
    balances as sparse incidence products.  ``args['data']`` is the
    :class:`ACOPFData` (pop it before passing ``args`` to a solver)."""
    import casadi as ca

    d = case if isinstance(case, ACOPFData) else acopf_data(case)
    nb, ng, nl = d.nb, d.ng, d.nl
    vm, va = ca.SX.sym("vm", nb), ca.SX.sym("va", nb)
    pg, qg = ca.SX.sym("pg", ng), ca.SX.sym("qg", ng)
    p_fr, q_fr = ca.SX.sym("p_fr", nl), ca.SX.sym("q_fr", nl)
    p_to, q_to = ca.SX.sym("p_to", nl), ca.SX.sym("q_to", nl)
    x = ca.vertcat(vm, va, pg, qg, p_fr, q_fr, p_to, q_to)

    def dm(a):
        return ca.DM(np.asarray(a, dtype=float))

    # vectors of data as DM so the operations stay elementwise on SX
    D = ACOPFData(**{**d.__dict__, **{k: dm(getattr(d, k)) for k in
                                      ("g", "b", "bc", "tau", "shift")}})
    ef, et = ca.DM(_incidence(d.f, nb, nl)), ca.DM(_incidence(d.t, nb, nl))
    eg = ca.DM(_incidence(d.gen_bus, nb, ng))
    fl = branch_flows(D, vm, va, ca)

    # the objective: polynomial of any degree, Horner per generator degree class
    f = 0
    for deg in sorted({c.size for c in d.cost}):
        idx = [k for k, c in enumerate(d.cost) if c.size == deg]
        C = np.array([d.cost[k] for k in idx])        # len(idx) x deg
        p = pg[idx] if len(idx) < ng else pg
        acc = dm(C[:, deg - 1]) if deg else 0
        for j in range(deg - 2, -1, -1):
            acc = acc * p + dm(C[:, j])
        if deg:
            f = f + ca.sum1(acc)

    rated = d.rated
    g = ca.vertcat(
        va[d.ref],
        ca.mtimes(eg, pg) - dm(d.pd) - dm(d.gs) * vm ** 2 - ca.mtimes(ef, p_fr) - ca.mtimes(et, p_to),
        ca.mtimes(eg, qg) - dm(d.qd) + dm(d.bs) * vm ** 2 - ca.mtimes(ef, q_fr) - ca.mtimes(et, q_to),
        p_fr - fl[0], q_fr - fl[1], p_to - fl[2], q_to - fl[3],
        p_fr[rated.tolist()] ** 2 + q_fr[rated.tolist()] ** 2,
        p_to[rated.tolist()] ** 2 + q_to[rated.tolist()] ** 2,
        va[d.f.tolist()] - va[d.t.tolist()],
    )
    nr = rated.size
    s2 = d.rate_a[rated] ** 2
    lbg = np.concatenate([np.zeros(1 + 2 * nb + 4 * nl), np.full(2 * nr, -np.inf), d.angmin])
    ubg = np.concatenate([np.zeros(1 + 2 * nb + 4 * nl), s2, s2, d.angmax])

    inf = np.full(nl, np.inf)
    lbx = np.concatenate([d.vmin, np.full(nb, -np.inf), d.pmin, d.qmin, -inf, -inf, -inf, -inf])
    ubx = np.concatenate([d.vmax, np.full(nb, np.inf), d.pmax, d.qmax, inf, inf, inf, inf])
    s = flat_start(d)
    x0 = np.concatenate([s[k] for k in ("vm", "va", "pg", "qg", "p_fr", "q_fr", "p_to", "q_to")])
    nlp = {"x": x, "f": f, "g": g}
    return nlp, dict(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, data=d)


def acopf_casadi_polar(case):
    """The polar AC-OPF over ``vm, va, pg, qg`` only, as a plain CasADi SX graph (no
    ``.map``): the branch flows are written out where they are used, in the balances
    and the thermal limits, with MATPOWER's branch admittances
    ``Y_ff = (y + j b^c/2)/tau^2``, ``Y_ft = -y/conj(T)``, ``Y_tf = -y/T``,
    ``Y_tt = y + j b^c/2`` (``y = g + j b``, ``T = tau e^{j sigma}``):

        p_ij = Re(Y_ff) v_i^2 + v_i v_j (Re(Y_ft) cos θ_ij + Im(Y_ft) sin θ_ij)
        q_ij = -Im(Y_ff) v_i^2 + v_i v_j (-Im(Y_ft) cos θ_ij + Re(Y_ft) sin θ_ij)
        p_ji = Re(Y_tt) v_j^2 + v_i v_j (Re(Y_tf) cos θ_ij - Im(Y_tf) sin θ_ij)
        q_ji = -Im(Y_tt) v_j^2 - v_i v_j (Im(Y_tf) cos θ_ij + Re(Y_tf) sin θ_ij)

    (the same flows as :func:`branch_flows`).  Variable order ``vm, va, pg, qg``;
    constraints ``[p_balance(nb), q_balance(nb), thermal_fr(nr), thermal_to(nr),
    angle_diff(nl)]``; the reference angle is fixed by its bounds.  This is the model
    of issue 20's setup measurements (a user's first CasADi AC-OPF).  Returns
    ``(nlp, args)`` as :func:`acopf_casadi`."""
    import casadi as ca

    d = case if isinstance(case, ACOPFData) else acopf_data(case)
    nb, ng, nl = d.nb, d.ng, d.nl
    vm, va = ca.SX.sym("vm", nb), ca.SX.sym("va", nb)
    pg, qg = ca.SX.sym("pg", ng), ca.SX.sym("qg", ng)
    y = d.g + 1j * d.b
    T = d.tau * np.exp(1j * d.shift)
    yff, yft, ytf, ytt = (y + 0.5j * d.bc) / d.tau ** 2, -y / np.conj(T), -y / T, \
        y + 0.5j * d.bc

    def dm(a):
        return ca.DM(np.asarray(a, dtype=float))

    f, t = d.f.tolist(), d.t.tolist()
    vf, vt = vm[f], vm[t]
    c, s = ca.cos(va[f] - va[t]), ca.sin(va[f] - va[t])
    w = vf * vt
    p_fr = dm(yff.real) * vf ** 2 + w * (dm(yft.real) * c + dm(yft.imag) * s)
    q_fr = dm(-yff.imag) * vf ** 2 + w * (dm(-yft.imag) * c + dm(yft.real) * s)
    p_to = dm(ytt.real) * vt ** 2 + w * (dm(ytf.real) * c - dm(ytf.imag) * s)
    q_to = dm(-ytt.imag) * vt ** 2 - w * (dm(ytf.imag) * c + dm(ytf.real) * s)
    ef, et = ca.DM(_incidence(d.f, nb, nl)), ca.DM(_incidence(d.t, nb, nl))
    eg = ca.DM(_incidence(d.gen_bus, nb, ng))
    obj = 0
    for k, cost in enumerate(d.cost):
        obj += sum(float(ck) * pg[k] ** j for j, ck in enumerate(cost) if ck != 0)
    r = d.rated.tolist()
    g = ca.vertcat(
        ca.mtimes(eg, pg) - dm(d.pd) - dm(d.gs) * vm ** 2 - ca.mtimes(ef, p_fr)
        - ca.mtimes(et, p_to),
        ca.mtimes(eg, qg) - dm(d.qd) + dm(d.bs) * vm ** 2 - ca.mtimes(ef, q_fr)
        - ca.mtimes(et, q_to),
        p_fr[r] ** 2 + q_fr[r] ** 2, p_to[r] ** 2 + q_to[r] ** 2, va[f] - va[t])
    nr = len(r)
    s2 = d.rate_a[d.rated] ** 2
    lbg = np.concatenate([np.zeros(2 * nb), np.full(2 * nr, -np.inf), d.angmin])
    ubg = np.concatenate([np.zeros(2 * nb), s2, s2, d.angmax])
    va_lo, va_hi = np.full(nb, -np.inf), np.full(nb, np.inf)
    va_lo[d.ref] = va_hi[d.ref] = 0.0
    lbx = np.concatenate([d.vmin, va_lo, d.pmin, d.qmin])
    ubx = np.concatenate([d.vmax, va_hi, d.pmax, d.qmax])
    st = flat_start(d)
    x0 = np.concatenate([st[k] for k in ("vm", "va", "pg", "qg")])
    nlp = {"x": ca.vertcat(vm, va, pg, qg), "f": obj, "g": g}
    return nlp, dict(x0=x0, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, data=d)


# --------------------------------------------------------------------- Pyomo
def acopf_pyomo(case):
    """The AC-OPF as a Pyomo ``ConcreteModel`` with indexed components.

    Sets ``N`` (bus positions), ``G`` (generators), ``E`` (branches), ``E_rated``;
    Vars ``vm[N], va[N], pg[G], qg[G], p_fr[E], q_fr[E], p_to[E], q_to[E]`` with the
    flat start as initial values; Constraints ``va_ref``, ``p_balance[N]``,
    ``q_balance[N]``, ``p_fr_def[E]``, ``q_fr_def[E]``, ``p_to_def[E]``,
    ``q_to_def[E]``, ``thermal_fr[E_rated]``, ``thermal_to[E_rated]``,
    ``angle_diff[E]``; Objective ``cost``.  ``model.data`` is the
    :class:`ACOPFData`."""
    import pyomo.environ as pyo

    d = case if isinstance(case, ACOPFData) else acopf_data(case)
    s = flat_start(d)
    m = pyo.ConcreteModel(name=f"acopf_{d.name}")
    m.N = pyo.RangeSet(0, d.nb - 1)
    m.G = pyo.RangeSet(0, d.ng - 1)
    m.E = pyo.RangeSet(0, d.nl - 1)
    m.E_rated = pyo.Set(initialize=[int(k) for k in d.rated], ordered=True)

    f, t = d.f.tolist(), d.t.tolist()
    g, b, bc, tau, sh = (a.tolist() for a in (d.g, d.b, d.bc, d.tau, d.shift))

    m.vm = pyo.Var(m.N, bounds=lambda _, i: (d.vmin[i], d.vmax[i]),
                   initialize=lambda _, i: s["vm"][i])
    m.va = pyo.Var(m.N, initialize=0.0)
    m.pg = pyo.Var(m.G, bounds=lambda _, k: (d.pmin[k], d.pmax[k]),
                   initialize=lambda _, k: s["pg"][k])
    m.qg = pyo.Var(m.G, bounds=lambda _, k: (d.qmin[k], d.qmax[k]),
                   initialize=lambda _, k: s["qg"][k])
    for nm in ("p_fr", "q_fr", "p_to", "q_to"):
        setattr(m, nm, pyo.Var(m.E, initialize=lambda _, l, nm=nm: s[nm][l]))

    gens_at = [[] for _ in range(d.nb)]
    for k, i in enumerate(d.gen_bus.tolist()):
        gens_at[i].append(k)
    from_at = [[] for _ in range(d.nb)]
    to_at = [[] for _ in range(d.nb)]
    for l in range(d.nl):
        from_at[f[l]].append(l)
        to_at[t[l]].append(l)

    m.va_ref = pyo.Constraint(expr=m.va[d.ref] == 0)

    def p_balance(m, i):
        return (sum(m.pg[k] for k in gens_at[i]) - d.pd[i] - d.gs[i] * m.vm[i] ** 2
                == sum(m.p_fr[l] for l in from_at[i]) + sum(m.p_to[l] for l in to_at[i]))

    def q_balance(m, i):
        return (sum(m.qg[k] for k in gens_at[i]) - d.qd[i] + d.bs[i] * m.vm[i] ** 2
                == sum(m.q_fr[l] for l in from_at[i]) + sum(m.q_to[l] for l in to_at[i]))

    m.p_balance = pyo.Constraint(m.N, rule=p_balance)
    m.q_balance = pyo.Constraint(m.N, rule=q_balance)

    def p_fr_def(m, l):
        i, j = f[l], t[l]
        a = m.va[i] - m.va[j] - sh[l]
        return m.p_fr[l] == (g[l] / tau[l] ** 2 * m.vm[i] ** 2 - m.vm[i] * m.vm[j] / tau[l]
                             * (g[l] * pyo.cos(a) + b[l] * pyo.sin(a)))

    def q_fr_def(m, l):
        i, j = f[l], t[l]
        a = m.va[i] - m.va[j] - sh[l]
        return m.q_fr[l] == (-(b[l] + bc[l] / 2) / tau[l] ** 2 * m.vm[i] ** 2
                             - m.vm[i] * m.vm[j] / tau[l] * (g[l] * pyo.sin(a) - b[l] * pyo.cos(a)))

    def p_to_def(m, l):
        i, j = f[l], t[l]
        a = m.va[j] - m.va[i] + sh[l]
        return m.p_to[l] == (g[l] * m.vm[j] ** 2 - m.vm[i] * m.vm[j] / tau[l]
                             * (g[l] * pyo.cos(a) + b[l] * pyo.sin(a)))

    def q_to_def(m, l):
        i, j = f[l], t[l]
        a = m.va[j] - m.va[i] + sh[l]
        return m.q_to[l] == (-(b[l] + bc[l] / 2) * m.vm[j] ** 2
                             - m.vm[i] * m.vm[j] / tau[l] * (g[l] * pyo.sin(a) - b[l] * pyo.cos(a)))

    m.p_fr_def = pyo.Constraint(m.E, rule=p_fr_def)
    m.q_fr_def = pyo.Constraint(m.E, rule=q_fr_def)
    m.p_to_def = pyo.Constraint(m.E, rule=p_to_def)
    m.q_to_def = pyo.Constraint(m.E, rule=q_to_def)

    ra2 = (d.rate_a ** 2).tolist()
    m.thermal_fr = pyo.Constraint(m.E_rated, rule=lambda m, l: m.p_fr[l] ** 2 + m.q_fr[l] ** 2 <= ra2[l])
    m.thermal_to = pyo.Constraint(m.E_rated, rule=lambda m, l: m.p_to[l] ** 2 + m.q_to[l] ** 2 <= ra2[l])
    m.angle_diff = pyo.Constraint(
        m.E, rule=lambda m, l: (float(d.angmin[l]), m.va[f[l]] - m.va[t[l]], float(d.angmax[l])))

    def cost(m):
        terms = []
        for k, c in enumerate(d.cost):
            for deg, ck in enumerate(c.tolist()):
                if ck == 0.0:
                    continue
                terms.append(ck if deg == 0 else ck * m.pg[k] if deg == 1 else ck * m.pg[k] ** deg)
        return sum(terms)

    m.cost = pyo.Objective(rule=cost, sense=pyo.minimize)
    m.data = d
    return m
