"""Benchmark: per-solve overhead on small problems, caspar-CPU vs IPOPT, both via nlpsol.

    python benchmarks/bench_small.py [--targets 200] [--repeats 3] [--no-bank]
        [--profile ik|bank|none] [--sort tottime|ncalls]

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


def _time_solves(S, targets, bounds, x0):
    ts, fs, its = [], [], []
    for t in targets:
        t0 = time.perf_counter()
        r = S(x0=x0, p=t, **bounds)
        ts.append(time.perf_counter() - t0)
        fs.append(float(r["f"]))
        its.append(int(S.stats()["iter_count"]))
    return np.array(ts), np.array(fs), np.array(its)


def count_calls(fn):
    """Python function calls made by ``fn()`` (cProfile's total)."""
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    return pstats.Stats(pr).total_calls


def bench_ik(n_targets, repeats):
    nlp, bounds = ik_problem()
    S_c, S_i = make_solvers(nlp)
    targets = ik_targets(n_targets)
    x0 = [0.1, 0.2, 0.3]
    S_c(x0=x0, p=targets[0], **bounds)      # warm-up (first-call work, lazy imports)
    S_i(x0=x0, p=targets[0], **bounds)
    # interleaved per target (both solvers see the same machine load); per target the
    # fastest of the repeats
    runs = {"caspar": [], "ipopt": []}
    for _ in range(repeats):
        for name in runs:
            runs[name].append(([], [], []))
        for t in targets:
            for name, S in (("caspar", S_c), ("ipopt", S_i)):
                ts, fs, its = _time_solves(S, [t], bounds, x0)
                for acc, v in zip(runs[name][-1], (ts, fs, its)):
                    acc.append(v[0])
    best = {name: (np.min([r[0] for r in rs], axis=0), np.array(rs[0][1]),
                   np.array(rs[0][2])) for name, rs in runs.items()}
    (tc, fc, ic), (ti, fi, ii) = best["caspar"], best["ipopt"]
    calls = count_calls(lambda: S_c(x0=x0, p=targets[1], **bounds))
    print(f"IK arm, {n_targets} targets (per target the best of {repeats} interleaved runs)")
    print(f"{'':8s} {'median ms':>10s} {'p99 ms':>8s} {'iters':>9s} {'us/iter':>8s}")
    for name, ts, its in (("caspar", tc, ic), ("ipopt", ti, ii)):
        print(f"{name:8s} {1e3 * np.median(ts):10.3f} {1e3 * np.percentile(ts, 99):8.3f} "
              f"{np.median(its):5.0f}/{its.sum():<5d} {1e6 * ts.sum() / its.sum():8.1f}")
    print(f"ratio median caspar/ipopt: {np.median(tc) / np.median(ti):.2f}; "
          f"iterations equal on {int(np.sum(ic == ii))}/{len(ic)}; "
          f"max |f - f_ipopt| = {np.max(np.abs(fc - fi)):.2e}; "
          f"Python calls per caspar solve: {calls}")
    return S_c, targets, bounds, x0


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
        ratio = np.median(tc) / np.median(ti)
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


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-bank", action="store_true")
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
    bench_ik(a.targets, a.repeats)
    if not a.no_bank:
        bench_bank(a.repeats)


if __name__ == "__main__":
    main()
