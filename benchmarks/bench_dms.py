"""Benchmark: CasADi's direct multiple shooting example (the initial state fixed by
lbw == ubw), per-solve time of caspar's compiled and general paths against IPOPT.

    python benchmarks/bench_dms.py [--rounds 30] [--N 20] [--json FILE]

The model is tests/support/casadi_ocp.py ``direct_multiple_shooting`` (Van der Pol, N
intervals of 4 RK4 steps, n = 3 N + 2, m = 2 N).  Solvers, each built once:

* ``caspar compiled``: ``Problem.solve(compiled_path='yes')`` (SX model);
* ``caspar general``: ``Problem.solve(compiled_path='no')`` -- what a solve with fixed
  variables took before they were ported to the compiled path;
* ``caspar nlpsol``: ``nlpsol('S', 'caspar', nlp)`` with default options (SX model);
* ``caspar nlpsol MX``: the same with the example's MX symbols (its 16-deep chain of RK4
  stage calls makes ``f`` an opaque call: docs/casadi-opaque-functions.md);
* ``ipopt nlpsol``: ``casadi.nlpsol('S', 'ipopt', nlp)`` (SX model).

Each round solves once with every solver, in turn (interleaved: all see the same load);
printed: median and p90 ms per solve over the rounds, iterations, the path, |f - f_ipopt|.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: tests.support


def solvers(N):
    import casadi as ca

    from caspar_backend import from_casadi
    from caspar_backend.casadi import nlpsol
    from tests.support.casadi_ocp import direct_multiple_shooting

    nlp, a = direct_multiple_shooting(N=N, sym="SX")
    nlp_mx, _ = direct_multiple_shooting(N=N, sym="MX")
    problem = from_casadi(nlp)
    bounds = {k: a[k] for k in ("lbx", "ubx", "lbg", "ubg")}

    def via_problem(mode):
        def solve():
            r = problem.solve(a["x0"], **bounds, print_level=0, compiled_path=mode)
            return r.f, r.iterations, (r.extra or {}).get("path", "general")
        return solve

    def via_nlpsol(S):
        def solve():
            r = S(**a)
            st = S.stats()
            c = st.get("caspar")
            path = "" if c is None else (c.get("extra") or {}).get("path", "general")
            return float(r["f"]), int(st["iter_count"]), path
        return solve

    quiet = {"print_time": False, "caspar": {"print_level": 0}}
    return {"caspar compiled": via_problem("yes"),
            "caspar general": via_problem("no"),
            "caspar nlpsol": via_nlpsol(nlpsol("S", "caspar", nlp, quiet)),
            "caspar nlpsol MX": via_nlpsol(nlpsol("S", "caspar", nlp_mx, quiet)),
            "ipopt nlpsol": via_nlpsol(ca.nlpsol("S", "ipopt", nlp, {
                "print_time": False, "ipopt": {"print_level": 0, "sb": "yes"}}))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--N", type=int, default=20)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    S = solvers(args.N)
    for solve in S.values():            # warm-up: lazy imports, kernel load, first calls
        solve()
        solve()
    times = {k: [] for k in S}
    out = {}
    for _ in range(args.rounds):
        for name, solve in S.items():
            t0 = time.perf_counter()
            out[name] = solve()
            times[name].append(time.perf_counter() - t0)
    f_ref = out["ipopt nlpsol"][0]
    t_ref = np.median(times["ipopt nlpsol"])
    print(f"direct multiple shooting, N = {args.N} (n = {3 * args.N + 2}, m = {2 * args.N}),"
          f" {args.rounds} interleaved rounds")
    print(f"{'':18s} {'median ms':>10s} {'p90 ms':>8s} {'/ IPOPT':>8s} {'iters':>6s} "
          f"{'|f - f_ipopt|':>14s}  path")
    rows = []
    for name, ts in times.items():
        f, it, path = out[name]
        row = dict(solver=name, median_ms=1e3 * float(np.median(ts)),
                   p90_ms=1e3 * float(np.percentile(ts, 90)),
                   ratio=float(np.median(ts) / t_ref), iterations=it,
                   df=abs(f - f_ref), path=path or "-")
        rows.append(row)
        print(f"{name:18s} {row['median_ms']:10.3f} {row['p90_ms']:8.3f} {row['ratio']:8.3f} "
              f"{it:6d} {row['df']:14.3e}  {row['path']}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(N=args.N, rounds=args.rounds, rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
