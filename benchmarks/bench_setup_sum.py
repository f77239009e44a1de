"""Setup time of an objective written as ONE CasADi SX sum (time to first solution).

The model is the chained Rosenbrock function, unconstrained,

    f(x) = sumsqr(1 - x[:-1]) + 100 * sumsqr(x[1:] - x[:-1]**2),   x in R^N,

built as one SX expression and handed to ``caspar_backend.casadi.nlpsol``.  Each size
runs in its own child process (so the peak resident memory is that size's alone,
``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after the child exits), which times

* ``read``    ``casadi_to_model``: the SX program read into caspar's DAG, sums flattened;
* ``group``   ``Problem(model)`` less ``derive``: instances, structural hashing, tables;
* ``derive``  the templates' gradients and Hessians (``PatternGroup.derive``);
* ``codegen`` the CPU evaluator: NumPy source per group, compiled;
* ``setup``   the whole ``nlpsol(...)`` call (the above plus option checks), wall and
              process CPU seconds (on a shared machine the CPU time is the steadier one),

and the number of pattern groups.  ``--solve N`` also solves at that size with caspar
and with IPOPT (casadi's nlpsol, its construction timed too) from x0 = 0.5 and prints
iterations and objectives side by side.

    python benchmarks/bench_setup_sum.py [--sizes 10000 30000 ...] [--solve 10000] [--bulk]
        [--out DIR]

``--out DIR`` writes the sizes' rows as ``DIR/results.csv`` with ``DIR/meta.json`` (the
report's "sum_setup" section reads ``benchmarks/results/sum_setup/cpu``).
        [--problem-cache off|cold]

The setup is cold: the problem cache (``adapters/casadi/problem_cache.py``, which loads a
compiled problem kept by an earlier process with the same program) is off in the
children (``CASPAR_PROBLEM_CACHE=0``) unless ``--problem-cache cold``: then it is on with
a new, empty folder per child, so every child stores its problem (the key's hashing and
the write counted) and none loads one.  The once-per-machine builds under
``$CASPAR_CACHE_DIR`` (caspar's C++ libraries, Numba's cache) are used as usual.

``--bulk``: the bulk SX reader (``adapters/casadi/bulk.py``) at every size (by default
from ``BULK_MIN_INSTRUCTIONS`` instructions, N >= 2,500 here); ``--per-node``: the
per-node reader at every size (``bulk=False``).  Both build the same model.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

DEFAULT_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
#: the solve comparison's start (from 0 both solvers stop at 3000 iterations near
#: the local minimum with x_0 < 0; from 0.5 both converge to f = 0)
X0 = 0.5


def rosenbrock(N):
    import casadi as ca

    x = ca.SX.sym("x", N)
    return x, ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)


def child(N: int, solve: bool, cold_store: bool = False) -> dict:
    """One size, in this process: phase times, groups, optionally the solves;
    ``cold_store``: the problem cache writes to a new, empty folder (module doc)."""
    import tempfile
    from pathlib import Path

    from caspar_backend.adapters.casadi import nlp as nlp_mod
    from caspar_backend.adapters.casadi import problem_cache
    from caspar_backend.casadi import nlpsol
    from caspar_backend.evaluators import numpy_eval
    from caspar_backend.patterns import PatternGroup
    from caspar_backend.problem import Problem

    if cold_store:
        store = Path(tempfile.mkdtemp(prefix="caspar_problems_"))
        problem_cache._folder = lambda: store
    t: dict = {"read": 0.0, "problem": 0.0, "derive": 0.0, "codegen": 0.0}

    def timed(key, fn):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                t[key] += time.perf_counter() - t0
        return wrapper

    # timing hooks for this child only
    nlp_mod.casadi_to_model = timed("read", nlp_mod.casadi_to_model)
    PatternGroup.derive = timed("derive", PatternGroup.derive)
    init = Problem.__init__
    Problem.__init__ = timed("problem", init)
    numpy_eval.NumpyEvaluator.__init__ = timed("codegen", numpy_eval.NumpyEvaluator.__init__)

    x, f = rosenbrock(N)
    t0, c0 = time.perf_counter(), time.process_time()
    S = nlpsol("S", "caspar", {"x": x, "f": f},
               {"print_time": False, "caspar": {"print_level": 0}})
    setup, setup_cpu = time.perf_counter() - t0, time.process_time() - c0
    pr = S.problem
    out = dict(N=N, setup=setup, setup_cpu=setup_cpu, read=t["read"], group=t["problem"] - t["derive"],
               derive=t["derive"], codegen=t["codegen"],
               groups=len(pr.objective_groups) + len(pr.constraint_groups),
               instances=[g.size for g in pr.groups],
               problem_cache=pr.model.meta.get("problem_cache", "off"))
    if cold_store:
        import shutil

        shutil.rmtree(store, ignore_errors=True)
    if solve:
        import casadi as ca

        t0 = time.perf_counter()
        r = S(x0=X0)
        out["caspar"] = dict(iterations=S.stats()["iter_count"], f=float(r["f"]),
                             status=S.stats()["return_status"],
                             solve=time.perf_counter() - t0)
        t0 = time.perf_counter()
        ip = ca.nlpsol("I", "ipopt", {"x": x, "f": f},
                       {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes"}})
        built = time.perf_counter() - t0
        r = ip(x0=X0)
        out["ipopt"] = dict(iterations=ip.stats()["iter_count"], f=float(r["f"]),
                            status=ip.stats()["return_status"], setup=built,
                            solve=time.perf_counter() - t0 - built)
    return out


def run_size(N: int, solve: bool, bulk: bool = False, per_node: bool = False,
             problem_cache: str = "off") -> dict:
    """:func:`child` in a fresh process, the problem cache ``"off"`` or ``"cold"``
    (module doc); adds its peak RSS in MB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    env = dict(os.environ, CASPAR_PROBLEM_CACHE="0" if problem_cache == "off" else "1")
    p = subprocess.run([sys.executable, __file__, "--child", str(N)]
                       + (["--solve-child"] if solve else []) + (["--bulk"] if bulk else [])
                       + (["--per-node"] if per_node else [])
                       + (["--cold-store"] if problem_cache == "cold" else []),
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return dict(N=N, error=(p.stderr.strip().splitlines() or ["killed"])[-1])
    out = json.loads(p.stdout.strip().splitlines()[-1])
    # ru_maxrss of children is the maximum over all waited-for children (kB on Linux);
    # sizes run in increasing order, so a larger value is this child's
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out["rss_mb"] = after / 1024 if after > before else float("nan")
    return out


def table(rows) -> str:
    head = ("|         N | setup CPU s | setup wall s | read s | group s | derive s | codegen s "
            "| peak RSS MB | groups |")
    lines = [head, "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['N']:>9} | failed: {r['error']} |")
            continue
        lines.append(f"| {r['N']:>9} | {r['setup_cpu']:11.2f} | {r['setup']:12.2f} | "
                     f"{r['read']:6.2f} | "
                     f"{r['group']:7.2f} | {r['derive']:8.3f} | {r['codegen']:9.3f} | "
                     f"{r['rss_mb']:11.0f} | {r['groups']:6d} |")
    return "\n".join(lines)


#: results.csv's columns, in order (one row per size)
CSV_COLUMNS = ("N", "setup", "setup_cpu", "read", "group", "derive", "codegen", "rss_mb",
               "groups", "problem_cache")


def write_folder(out: str, rows: list, args, argv) -> None:
    """``out/results.csv`` (:data:`CSV_COLUMNS`) and ``out/meta.json``."""
    import casadi

    from benchmarks.runner import commit, hardware, write_meta, write_results

    write_results(out, list(CSV_COLUMNS), [{k: r.get(k, "") for k in CSV_COLUMNS}
                                           for r in rows])
    hw = hardware()
    reader = "bulk" if args.bulk else "per-node" if args.per_node else "the default"
    write_meta(os.path.join(out, "meta.json"), commit=commit(),
               date=time.strftime("%Y-%m-%d %H:%M %Z"),
               hardware=f"{hw['cpu']}, {hw['cores']} cores (load average "
                        f"{os.getloadavg()[0]:.1f} at the end), CasADi {casadi.__version__}",
               sizes="N = " + ", ".join(f"{r['N']:,}" for r in rows) + ": the chained "
                     "Rosenbrock function as ONE CasADi SX sum",
               tol=(f"setup only: the whole nlpsol(..., 'caspar') call, each size in a "
                    f"child process ({reader} reader; problem cache {args.problem_cache})"),
               command=" ".join(["python benchmarks/bench_setup_sum.py", *argv]))
    print(f"wrote {out}/results.csv and meta.json")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=list(DEFAULT_SIZES))
    ap.add_argument("--solve", type=int, nargs="*", default=[10_000],
                    help="sizes at which to solve with caspar and IPOPT")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--solve-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--cold-store", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--problem-cache", choices=("off", "cold"), default="off",
                    help="the problem cache off (default), or on with an empty folder")
    ap.add_argument("--bulk", action="store_true", help="the bulk SX reader at every size")
    ap.add_argument("--per-node", action="store_true", help="the per-node reader at every size")
    ap.add_argument("--out", help="write results.csv and meta.json into this folder")
    a = ap.parse_args(argv)
    if a.bulk or a.per_node:
        from caspar_backend.adapters.casadi import nlp as casadi_nlp

        casadi_nlp.BULK_MIN_INSTRUCTIONS = 0 if a.bulk else None
    if a.child is not None:
        print(json.dumps(child(a.child, a.solve_child, a.cold_store)))
        return
    rows = []
    for N in sorted(a.sizes):
        rows.append(run_size(N, N in a.solve, a.bulk, a.per_node, a.problem_cache))
        print(json.dumps(rows[-1]), flush=True)
    print(table(rows))
    if a.out:
        write_folder(a.out, rows, a, sys.argv[1:] if argv is None else argv)
    for r in rows:
        if "caspar" in r:
            c, i = r["caspar"], r["ipopt"]
            print(f"N = {r['N']}: caspar {c['status']} {c['iterations']} iterations "
                  f"f = {c['f']!r} (solve {c['solve']:.2f} s); IPOPT {i['status']} "
                  f"{i['iterations']} iterations f = {i['f']!r} (nlpsol construction "
                  f"{i['setup']:.2f} s, solve {i['solve']:.2f} s)")


if __name__ == "__main__":
    main()
