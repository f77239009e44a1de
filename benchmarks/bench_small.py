"""Benchmark: per-solve overhead on small problems, caspar-CPU vs IPOPT, both via nlpsol.

    python benchmarks/bench_small.py [--targets 200] [--repeats 3] [--no-bank]
        [--profile ik|bank|none] [--sort tottime|ncalls] [--out FOLDER]

1. **Three-link planar arm inverse kinematics** (the "per-iteration overhead" case): joint
   angles ``q`` (3), parameters ``t = (tx, ty)`` (the target), link lengths 1.0, 0.8, 0.6,

       min_q  (x_e(q) - tx)^2 + (y_e(q) - ty)^2 + 1e-3 |q|^2
       s.t.   -pi <= q_i <= pi,   q_1 + q_2 + q_3 <= 2.5 (one inequality),

   with ``x_e = sum_k l_k cos(q_1 + ... + q_k)`` (``y_e`` with sin).  Both solvers are one
   ``nlpsol`` Function built once and called with >= 200 reachable targets (fixed seed);
   printed: median and p99 seconds per solve, iterations, max |f - f_ipopt|,
   microseconds per iteration, and Python function calls per caspar solve.

2. **The problem bank** (``tests/support/problem_bank.py``) one problem at a time: the
   problem compiled once (caspar: ``from_casadi(...)`` and ``Problem.solve``, the compiled
   interior point where it applies -- the path is printed; IPOPT: ``casadi.nlpsol``
   built once), the solve timed ``--repeats`` times; printed: the median over problems
   of the ratio of median solve times caspar / IPOPT.

Timings are medians over repeats on a shared machine: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: tests.support

def ik_problem():
    """The IK nlp dict (casadi SX) and its bounds (the demo's model)."""
    from caspar_backend.adapters.casadi.models import arm_ik

    return arm_ik()


def ik_targets(n, seed=0):
    """``n`` reachable targets: radius in [0.3, 2.2] (reach 2.4), any direction."""
    from caspar_backend.adapters.casadi.models import arm_targets

    return arm_targets(n, seed)


def make_solvers(nlp):
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    S_c = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0}, "print_time": False})
    S_i = ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes"},
                                        "print_time": False})
    return S_c, S_i


def _nlpsol_solver(S, bounds, x0):
    """``solve(target) -> (f, iterations, path)`` through an nlpsol Function."""
    def solve(t):
        r = S(x0=x0, p=t, **bounds)
        st = S.stats()
        caspar = st.get("caspar")
        path = "" if caspar is None else (caspar.get("extra") or {}).get("path", "general")
        return float(r["f"]), int(st["iter_count"]), path
    return solve


def _problem_solver(problem, x0, **options):
    """``solve(target) -> (f, iterations, path)`` through ``Problem.solve``."""
    def solve(t):
        r = problem.solve(x0=x0, p=t, print_level=0, **options)
        return r.f, r.iterations, (r.extra or {}).get("path", "general")
    return solve


def count_calls(fn):
    """Python function calls made by ``fn()`` (cProfile's total)."""
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    return pstats.Stats(pr).total_calls


def bench_ik(n_targets, repeats):
    """IK timings of four ways to solve, interleaved per target; returns the rows."""
    from caspar_backend import from_casadi

    nlp, bounds = ik_problem()
    S_c, S_i = make_solvers(nlp)
    problem = from_casadi(nlp, **bounds)
    targets = ik_targets(n_targets)
    x0 = [0.1, 0.2, 0.3]
    solvers = {"caspar nlpsol": _nlpsol_solver(S_c, bounds, x0),
               "caspar Problem.solve": _problem_solver(problem, x0),
               "caspar general path": _problem_solver(problem, x0, compiled_path="no"),
               "ipopt nlpsol": _nlpsol_solver(S_i, bounds, x0)}
    for solve in solvers.values():          # warm-up (first-call work, lazy imports)
        solve(targets[0])
    # interleaved per target (all solvers see the same machine load); per target the
    # fastest of the repeats
    times = {name: np.full((repeats, len(targets)), np.inf) for name in solvers}
    out = {}
    for r in range(repeats):
        for k, t in enumerate(targets):
            for name, solve in solvers.items():
                t0 = time.perf_counter()
                res = solve(t)
                times[name][r, k] = time.perf_counter() - t0
                out[name, k] = res
    ti = times["ipopt nlpsol"].min(axis=0)
    fi = np.array([out["ipopt nlpsol", k][0] for k in range(len(targets))])
    ii = np.array([out["ipopt nlpsol", k][1] for k in range(len(targets))])
    calls = count_calls(lambda: S_c(x0=x0, p=targets[1], **bounds))
    print(f"IK arm, {n_targets} targets (per target the best of {repeats} interleaved runs)")
    print(f"{'':22s} {'median ms':>10s} {'p99 ms':>8s} {'iters':>10s} {'us/iter':>8s} "
          f"{'/ IPOPT':>8s} {'same it':>8s} {'max |df|':>9s}  path")
    rows = []
    for name in solvers:
        ts = times[name].min(axis=0)
        fs = np.array([out[name, k][0] for k in range(len(targets))])
        its = np.array([out[name, k][1] for k in range(len(targets))])
        path = out[name, 0][2]
        row = dict(solver=name, targets=len(targets), median_ms=1e3 * np.median(ts),
                   p99_ms=1e3 * np.percentile(ts, 99), iterations=int(np.median(its)),
                   us_per_iter=1e6 * ts.sum() / its.sum(),
                   ratio=float(np.median(ts) / np.median(ti)),
                   same_iterations=int(np.sum(its == ii)),
                   max_df=float(np.max(np.abs(fs - fi))), path=path or "-")
        rows.append(row)
        print(f"{name:22s} {row['median_ms']:10.3f} {row['p99_ms']:8.3f} "
              f"{row['iterations']:5d}/{its.sum():<5d}{row['us_per_iter']:8.1f} "
              f"{row['ratio']:8.3f} {row['same_iterations']:4d}/{len(its):<3d} "
              f"{row['max_df']:9.1e}  {row['path']}")
    print(f"Python calls per caspar nlpsol solve: {calls}")
    return rows


def bench_bank(repeats):
    import casadi as ca

    from caspar_backend import from_casadi
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    ratios, rows = [], []
    for p in bank(include_slow=False):
        d = dict(p.build(), options=p.options)
        opts = dict(p.options)
        problem = from_casadi(_nlp(d))
        c_opts = {"print_level": 0, **opts}
        S = ca.nlpsol("S", "ipopt", _nlp(d), {
            "ipopt": {"print_level": 0, "sb": "yes",
                      **{k: ("yes" if v is True else "no" if v is False else v)
                         for k, v in opts.items()}},
            "print_time": False, "error_on_fail": False})
        args = dict(x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"])
        if d["g"] is not None:
            args.update(lbg=d["lbg"], ubg=d["ubg"])
        tc, ti = [], []
        for _ in range(repeats):
            t0 = time.perf_counter()
            r = problem.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"],
                              ubg=d["ubg"], **c_opts)
            tc.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            S(**args)
            ti.append(time.perf_counter() - t0)
        ratio = float(np.median(tc) / np.median(ti))
        ratios.append(ratio)
        rows.append((p.name, r.iterations, S.stats()["iter_count"], np.median(tc), np.median(ti),
                     ratio, (r.extra or {}).get("path", "general")))
    print(f"\nbank ({len(rows)} problems, median of {repeats} solves each)")
    for name, itc, iti, tc, ti, ratio, path in rows:
        print(f"  {name:24s} it {itc:4d}/{iti:<4d} caspar {1e3 * tc:8.2f} ms  "
              f"ipopt {1e3 * ti:8.2f} ms  ratio {ratio:6.2f}  {path}")
    n_comp = sum(r[-1] == "compiled" for r in rows)
    print(f"compiled path on {n_comp}/{len(rows)} problems")
    print(f"bank median ratio caspar/ipopt: {np.median(ratios):.2f} "
          f"(p25 {np.percentile(ratios, 25):.2f}, p75 {np.percentile(ratios, 75):.2f})")
    comp = [r for r in rows if r[-1] == "compiled"]
    return dict(solver="bank: caspar Problem.solve", targets=len(rows),
                median_ms=float(np.median([r[3] for r in rows]) * 1e3),
                ratio=float(np.median(ratios)), same_iterations=sum(r[1] == r[2] for r in rows),
                path=f"compiled on {len(comp)}/{len(rows)}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-bank", action="store_true")
    ap.add_argument("--out", help="write results.csv and meta.json into this folder "
                                  "(benchmarks/results/small/cpu for the report)")
    ap.add_argument("--profile", choices=("ik", "bank", "none"), default="none")
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=40)
    a = ap.parse_args(argv)
    if a.profile == "ik":
        nlp, bounds = ik_problem()
        S_c, _ = make_solvers(nlp)
        targets = ik_targets(50)
        S_c(x0=[0.1, 0.2, 0.3], p=targets[0], **bounds)
        pr = cProfile.Profile()
        pr.enable()
        for t in targets:
            S_c(x0=[0.1, 0.2, 0.3], p=t, **bounds)
        pr.disable()
        pstats.Stats(pr).sort_stats(a.sort).print_stats(a.top)
        return
    if a.profile == "bank":
        from caspar_backend.solver import solve_nlp
        from tests.support.problem_bank import bank
        from tests.support.solver_harness import make_evaluator

        work = []
        for p in bank(include_slow=False)[:20]:
            d = dict(p.build(), options=p.options)
            work.append((make_evaluator(d), d, {"print_level": 0, **dict(p.options)}))
        pr = cProfile.Profile()
        pr.enable()
        for ev, d, o in work:
            solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"], options=o)
        pr.disable()
        pstats.Stats(pr).sort_stats(a.sort).print_stats(a.top)
        return
    rows = bench_ik(a.targets, a.repeats)
    if not a.no_bank:
        rows.append(bench_bank(a.repeats))
    if a.out:
        _write(a.out, rows, a)


def _write(folder, rows, a):
    """``folder/results.csv`` (the rows) and ``folder/meta.json`` (the report's header)."""
    import csv
    import json
    import subprocess

    os.makedirs(folder, exist_ok=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(os.path.join(folder, "results.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, keys)
        w.writeheader()
        w.writerows(rows)
    commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    meta = dict(commit=commit, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                hardware=f"development VM, {os.cpu_count()} cores (load average "
                         f"{os.getloadavg()[0]:.1f}); ratios within the run are what count",
                sizes=f"three-link arm IK (n = 3, m = 1), {a.targets} targets; the problem "
                      "bank one problem at a time",
                tol="IPOPT's defaults (tol 1e-8) for both; per target the best of "
                    f"{a.repeats} interleaved runs",
                command=f"python benchmarks/bench_small.py --targets {a.targets} "
                        f"--repeats {a.repeats} --out {folder}")
    with open(os.path.join(folder, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)


if __name__ == "__main__":
    main()
