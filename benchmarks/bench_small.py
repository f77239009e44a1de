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
   microseconds per iteration, and Python function calls per caspar solve.  Then the
   same targets with the solver built anew for each (construction and call timed), through
   ``nlpsol`` and written with casadi's ``Opti`` (MX).

2. **The problem bank** (``tests/support/problem_bank.py``, all 69 problems; ``--bank-fast``
   leaves out the two with 10^4 variables) one problem at a time: the problem compiled once
   (caspar: ``caspar_backend.casadi.nlpsol`` and ``from_casadi(...)`` with ``Problem.solve``,
   the compiled interior point where it applies -- the path is printed; IPOPT:
   ``casadi.nlpsol`` built once), the three solves interleaved ``--repeats`` times, per
   problem the fastest; printed per solver: median and p99 over problems, total iterations
   and microseconds per iteration, the median over problems of the ratio to IPOPT's time;
   and the same of each problem's first call through nlpsol (caspar's builds the compiled
   path's workspace for the bounds' structure).

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


def bench_rebuilt(n_targets):
    """IK with the solver built anew for every target (a script's ``solve(target)`` that
    makes its ``nlpsol`` each time): per target the construction and the call, caspar's
    and IPOPT's interleaved; rows with the median and p99 of the sum."""
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    nlp, bounds = ik_problem()
    targets = ik_targets(n_targets)
    x0 = [0.1, 0.2, 0.3]
    from caspar_backend.casadi import Opti

    def nlpsol_call(make):
        return lambda t: float(make()(x0=x0, p=t, **bounds)["f"])

    makers = {
        "caspar nlpsol, built per call": nlpsol_call(lambda: nlpsol(
            "S", "caspar", nlp, {"caspar": {"print_level": 0}, "print_time": False})),
        "ipopt nlpsol, built per call": nlpsol_call(lambda: ca.nlpsol(
            "S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes"},
                                "print_time": False})),
        "caspar Opti, built per call": lambda t: _opti_ik(Opti, "caspar", t),
        "ipopt Opti, built per call": lambda t: _opti_ik(ca.Opti, "ipopt", t)}
    for solve in makers.values():                   # warm-up (first-call work, imports)
        solve(targets[0])
    times = {name: [] for name in makers}
    fs = {name: [] for name in makers}
    for t in targets:
        for name, solve in makers.items():
            t0 = time.perf_counter()
            fs[name].append(solve(t))
            times[name].append(time.perf_counter() - t0)
    rows = []
    for name in makers:
        ref = name.replace("caspar", "ipopt")         # the same way with IPOPT
        ts = np.array(times[name])
        rows.append(dict(solver=name, targets=len(targets), median_ms=1e3 * np.median(ts),
                         p99_ms=1e3 * np.percentile(ts, 99),
                         ratio=float(np.median(ts) / np.median(times[ref])),
                         max_df=float(np.max(np.abs(np.array(fs[name]) - fs[ref])))))
        print(f"{name:30s} median {rows[-1]['median_ms']:7.3f} ms  p99 "
              f"{rows[-1]['p99_ms']:7.3f} ms  / IPOPT {rows[-1]['ratio']:6.3f}  "
              f"max |df| {rows[-1]['max_df']:.1e}")
    return rows


def _opti_ik(opti_class, solver, target):
    """The IK written with casadi's Opti (MX), built and solved for one target; f."""
    import casadi as ca

    from caspar_backend.adapters.casadi.models import ARM_LINKS

    opti = opti_class()
    q, t = opti.variable(3), opti.parameter(2)
    ang = xe = ye = 0
    for k, lk in enumerate(ARM_LINKS):
        ang = ang + q[k]
        xe, ye = xe + lk * ca.cos(ang), ye + lk * ca.sin(ang)
    opti.minimize((xe - t[0]) ** 2 + (ye - t[1]) ** 2 + 1e-3 * ca.sumsqr(q))
    opti.subject_to(opti.bounded(-np.pi, q, np.pi))
    opti.subject_to(q[0] + q[1] + q[2] <= 2.5)
    opti.set_value(t, target)
    opti.set_initial(q, [0.1, 0.2, 0.3])
    opti.solver(solver, {"print_time": False},
                {"print_level": 0, **({"sb": "yes"} if solver == "ipopt" else {})})
    return float(opti.solve().value(opti.f))


def bench_bank(repeats, include_slow=True):
    """The bank one problem at a time: caspar through ``nlpsol`` and ``Problem.solve``,
    IPOPT through ``casadi.nlpsol``, interleaved per problem, per problem the best of
    ``repeats``; one row per solver: median and p99 over problems of the time per solve, the
    iterations summed over problems and the time per iteration (total time / total
    iterations), the median over problems of the ratio to IPOPT's time, and the largest
    |f - f_IPOPT| / max(1, |f_IPOPT|)."""
    import casadi as ca

    from caspar_backend import from_casadi
    from caspar_backend.casadi import nlpsol
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    names = ("caspar nlpsol", "caspar Problem.solve", "ipopt nlpsol")
    res = {name: [] for name in names}          # per problem: (seconds, f, iterations, path)
    first = {name: [] for name in names}        # per problem: the first call's seconds
    problems = bank(include_slow=include_slow)
    for p in problems:
        d = dict(p.build(), options=p.options)
        opts = dict(p.options)
        nlp = _nlp(d)
        problem = from_casadi(nlp)
        S_c = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0, **opts},
                                          "print_time": False, "error_on_fail": False})
        S_i = ca.nlpsol("S", "ipopt", nlp, {
            "ipopt": {"print_level": 0, "sb": "yes",
                      **{k: ("yes" if v is True else "no" if v is False else v)
                         for k, v in opts.items()}},
            "print_time": False, "error_on_fail": False})
        args = dict(x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"])
        if d["g"] is not None:
            args.update(lbg=d["lbg"], ubg=d["ubg"])

        def via_nlpsol(S):
            r = S(**args)
            st = S.stats()
            path = ((st.get("caspar") or {}).get("extra") or {}).get("path", "general")
            return float(r["f"]), int(st["iter_count"]), path

        def via_problem():
            r = problem.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"],
                              ubg=d["ubg"], print_level=0, **opts)
            return r.f, r.iterations, (r.extra or {}).get("path", "general")

        solvers = dict(zip(names, (lambda: via_nlpsol(S_c), via_problem,
                                   lambda: via_nlpsol(S_i))))
        best, answer = dict.fromkeys(names, np.inf), {}
        for r in range(repeats):
            for name, solve in solvers.items():
                t0 = time.perf_counter()
                answer[name] = solve()
                best[name] = min(best[name], time.perf_counter() - t0)
                if r == 0:
                    first[name].append(best[name])
        for name in names:
            res[name].append((best[name], *answer[name]))
    t_i = np.array([r[0] for r in res["ipopt nlpsol"]])
    f_i = np.array([r[1] for r in res["ipopt nlpsol"]])
    it_i = np.array([r[2] for r in res["ipopt nlpsol"]])
    print(f"\nbank ({len(problems)} problems, per problem the best of {repeats} interleaved "
          "solves)")
    for k, p in enumerate(problems):
        print(f"  {p.name:26s} " + "  ".join(
            f"{name.split()[0][:1]}{name.split()[1][:1]} {1e3 * res[name][k][0]:8.2f} ms "
            f"it {res[name][k][2]:4d}" for name in names) + f"  {res[names[1]][k][3]}")
    rows = []
    for name in names:
        t = np.array([r[0] for r in res[name]])
        f = np.array([r[1] for r in res[name]])
        it = np.array([r[2] for r in res[name]])
        paths = [r[3] for r in res[name]]
        n_comp = sum(q == "compiled" for q in paths)
        row = dict(solver=f"bank: {name}", targets=len(problems),
                   median_ms=1e3 * float(np.median(t)), p99_ms=1e3 * float(np.percentile(t, 99)),
                   iterations=int(it.sum()), us_per_iter=1e6 * float(t.sum() / it.sum()),
                   ratio=float(np.median(t / t_i)), same_iterations=int(np.sum(it == it_i)),
                   max_df=float(np.max(np.abs(f - f_i) / np.maximum(1.0, np.abs(f_i)))),
                   path="-" if name.startswith("ipopt") else
                   f"compiled on {n_comp}/{len(problems)}")
        rows.append(row)
        print(f"{row['solver']:28s} median {row['median_ms']:8.3f} ms  p99 {row['p99_ms']:9.2f} ms"
              f"  {row['iterations']:6d} it  {row['us_per_iter']:8.1f} us/it  "
              f"ratio {row['ratio']:6.3f}  same it {row['same_iterations']}/{len(problems)}  "
              f"max rel df {row['max_df']:.1e}  {row['path']}")
    # a problem's first call: caspar's builds the compiled path's workspace layout for the
    # bounds' structure (kept for later calls); casadi's first ipopt call its own memory
    t_i1 = np.array(first["ipopt nlpsol"])
    for name in ("caspar nlpsol", "ipopt nlpsol"):
        t = np.array(first[name])
        row = dict(solver=f"bank: {name}, first call", targets=len(problems),
                   median_ms=1e3 * float(np.median(t)), p99_ms=1e3 * float(np.percentile(t, 99)),
                   ratio=float(np.median(t / t_i1)))
        rows.append(row)
        print(f"{row['solver']:28s} median {row['median_ms']:8.3f} ms  p99 {row['p99_ms']:9.2f} ms"
              f"  ratio {row['ratio']:6.3f}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-bank", action="store_true")
    ap.add_argument("--bank-fast", action="store_true",
                    help="leave out the bank's two 10^4-variable problems")
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
    rows += bench_rebuilt(a.targets)
    if not a.no_bank:
        rows += bench_bank(a.repeats, include_slow=not a.bank_fast)
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
                      "bank one problem at a time (its rows: median and p99 over problems, "
                      "iterations summed over problems, |f - f_IPOPT| relative to "
                      "max(1, |f_IPOPT|))",
                tol="IPOPT's defaults (tol 1e-8) for both; per target the best of "
                    f"{a.repeats} interleaved runs",
                command=f"python benchmarks/bench_small.py --targets {a.targets} "
                        f"--repeats {a.repeats} --out {folder}")
    with open(os.path.join(folder, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)


if __name__ == "__main__":
    main()
