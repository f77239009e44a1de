"""caspar against IPOPT on NLPs with opaque CasADi Functions (interpolants, integrators,
chains of calls).

    python benchmarks/bench_opaque.py [--repeats 3] [--sizes 10 50 200]

Cases (``casadi.nlpsol`` 'ipopt' and caspar's ``nlpsol`` on the same dict, same tol):

* ``ms_loop N`` / ``ms_map N``: a 2-state oscillator steered over N intervals by one
  cvodes integrator, multiple shooting (N call sites, or one ``I.map(N)``);
* ``lut_fit N``: a smoothing fit through N points of a 1-D bspline interpolant
  (``lut.map(N)`` and N direct calls), objective only;
* ``euler_ss N``: single shooting through nested MX Functions (a rocket, N explicit
  Euler steps of one MX Function in a chain; ``models.rocket_single_shooting``): the
  chain's Function becomes an opaque call (adapters/casadi/compiler.py);
* ``euler_ss_nested N``: the same chain inside an MX Function ``rollout`` called once
  (issue 23's case: ``--cases euler_ss_nested --sizes 1000``).

Per case: build time (``nlpsol``) and solve time of each solver, interleaved over the
repeats (medians), the ratio caspar / IPOPT, iterations, and how much of caspar's solve
the host Functions took (values, Jacobians, Hessians, derivatives along seeds through
casadi).  The machine's
timings are noisy: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def oscillator(N, mode):
    import casadi as ca

    s, u = ca.SX.sym("s", 2), ca.SX.sym("u")
    ode = {"x": s, "u": u, "ode": ca.vertcat(s[1], -s[0] + u), "quad": s[0] ** 2 + u ** 2}
    I = ca.integrator("I", "cvodes", ode, 0.0, 2.0 / N, {"abstol": 1e-10, "reltol": 1e-10})
    X, U = ca.MX.sym("X", 2, N + 1), ca.MX.sym("U", N)
    g = [X[:, 0] - ca.DM([1.0, 0.0])]
    if mode == "loop":
        J = 0
        for k in range(N):
            r = I(x0=X[:, k], u=U[k])
            g.append(r["xf"] - X[:, k + 1])
            J += r["qf"]
    else:
        r = I.map(N)(x0=X[:, :N], u=U.T)
        g.append(ca.vec(r["xf"] - X[:, 1:]))
        J = ca.sum2(r["qf"])
    J += 10 * ca.sumsqr(X[:, N])
    nx = 2 * (N + 1)
    return ({"x": ca.vertcat(ca.vec(X), U), "f": J, "g": ca.vertcat(*g)},
            dict(x0=0.1, lbx=np.r_[np.full(nx, -np.inf), np.full(N, -1.0)],
                 ubx=np.r_[np.full(nx, np.inf), np.full(N, 1.0)], lbg=0.0, ubg=0.0))


def lut_fit(N):
    import casadi as ca

    grid = np.linspace(0.0, 3.0, 40)
    lut = ca.interpolant("lut", "bspline", [grid], np.sin(2 * grid))
    x = ca.MX.sym("x", N)
    t = np.linspace(0.1, 2.9, N)
    half = N // 2
    y = ca.vertcat(lut.map(half)(x[:half].T).T, *[lut(x[k]) for k in range(half, N)])
    f = ca.sumsqr(y - np.cos(t)) + 1e-2 * ca.sumsqr(x[1:] - x[:-1])
    return {"x": x, "f": f}, dict(x0=t, lbx=0.0, ubx=3.0)


def rocket(N, nested=False):
    from caspar_backend.adapters.casadi.models import rocket_single_shooting

    return rocket_single_shooting(N, nested)


CASES = {"ms_loop": lambda N: oscillator(N, "loop"), "ms_map": lambda N: oscillator(N, "map"),
         "lut_fit": lambda N: lut_fit(10 * N), "euler_ss": rocket,
         "euler_ss_nested": lambda N: rocket(N, nested=True)}


def host_timer():
    """Patch CasadiHostFunction's evaluations with a shared seconds counter."""
    from caspar_backend.adapters.casadi.opaque import CasadiHostFunction

    spent = [0.0]
    for name in ("values", "jacobian", "hessian", "directional", "directional_hessian", "vjp"):
        orig = getattr(CasadiHostFunction, name)

        def timed(self, *a, _orig=orig):
            t = time.perf_counter()
            try:
                return _orig(self, *a)
            finally:
                spent[0] += time.perf_counter() - t

        setattr(CasadiHostFunction, name, timed)
    return spent


def run(case, N, repeats, spent):
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    nlp, args = CASES[case](N)
    rows = {"ipopt": [], "caspar": []}
    for _ in range(repeats):
        for which in ("ipopt", "caspar"):
            t0 = time.perf_counter()
            if which == "ipopt":
                S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False, "ipopt": {
                    "print_level": 0, "sb": "yes", "tol": 1e-8}})
            else:
                S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
                    "print_level": 0, "tol": 1e-8}})
            t1 = time.perf_counter()
            h0 = spent[0]
            r = S(**args)
            t2 = time.perf_counter()
            st = S.stats()
            rows[which].append((t1 - t0, t2 - t1, float(r["f"]), st["return_status"],
                                st["iter_count"], spent[0] - h0))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v))
           for k, v in rows.items()}
    i, c = rows["ipopt"][-1], rows["caspar"][-1]
    return (f"{case:8s} N={N:5d}  ipopt build {med['ipopt'][0]:6.3f}s solve "
            f"{med['ipopt'][1]:6.3f}s ({i[4]} it, {i[3]})  caspar build {med['caspar'][0]:6.3f}s "
            f"solve {med['caspar'][1]:6.3f}s ({c[4]} it, {c[3]}, host Functions "
            f"{c[5] / max(c[1], 1e-12):4.0%})  solve ratio {med['caspar'][1] / med['ipopt'][1]:5.2f}"
            f"  |df|/|f| {abs(c[2] - i[2]) / max(1.0, abs(i[2])):.1e}"
            f"  f ipopt {i[2]:.10g} caspar {c[2]:.10g}  total ratio "
            f"{sum(med['caspar']) / sum(med['ipopt']):5.3f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200])
    ap.add_argument("--cases", nargs="+", default=sorted(CASES))
    a = ap.parse_args(argv)
    spent = host_timer()
    for case in a.cases:
        for N in a.sizes:
            print(run(case, N, a.repeats, spent), flush=True)


if __name__ == "__main__":
    main()
