"""Benchmark: a short CasADi script the way its user waits -- a fresh Python process that
imports the solver, builds an ``nlpsol`` of the three-link arm IK (bench_small's problem)
and solves it for k targets, caspar against IPOPT.

    python benchmarks/bench_small_cold.py [--k 1,2,10,200] [--repeats 3] [--out FOLDER]

Each (solver, k) runs ``--repeats`` times in its own process, the two solvers alternating;
a process reports, from the first line of its script (imports included, the interpreter's
own start-up not): ``import`` seconds (casadi and the solver's front end), ``build``
(the nlpsol Function), ``solves`` (the k calls), ``total`` (all three), and its slowest
single solve.  Printed and written (``--out``: results.csv, meta.json): per (solver, k)
the median of each over the repeats, and caspar's total over IPOPT's.

What it shows: bench_small's per-solve medians are warm (the best of interleaved repeats
in one process); here a process pays caspar's one-time costs too -- its first solve on the
general path and the compiled kernels' load at its second small solve
(``caspar_backend.compiled.dispatch``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: the script a process runs: argv solver, k; prints one JSON line
SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
solver, k, root = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, root)
import casadi as ca
if solver == "caspar":
    from caspar_backend.casadi import nlpsol
else:
    nlpsol = ca.nlpsol
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
t1 = time.perf_counter()
nlp, bounds = arm_ik()
opts = ({"caspar": {"print_level": 0}, "print_time": False} if solver == "caspar"
        else {"ipopt": {"print_level": 0, "sb": "yes"}, "print_time": False})
S = nlpsol("S", solver, nlp, opts)
t2 = time.perf_counter()
worst, f = 0.0, []
for t in arm_targets(k, 0):
    a = time.perf_counter()
    r = S(x0=[0.1, 0.1, 0.1], p=t, **bounds)
    worst = max(worst, time.perf_counter() - a)
    f.append(float(r["f"]))
t3 = time.perf_counter()
print(json.dumps(dict(imports=t1 - t0, build=t2 - t1, solves=t3 - t2, total=t3 - t0,
                      worst=worst, f=f)))
"""

COLUMNS = ("solver", "k", "imports_s", "build_s", "solves_s", "total_s", "worst_solve_ms",
           "ratio", "max_df")


def run_once(solver: str, k: int) -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT, solver, str(k), ROOT],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", default="1,2,10,200")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    rows = []
    for k in (int(v) for v in a.k.split(",")):
        runs = {"caspar": [], "ipopt": []}
        for _ in range(a.repeats):
            for solver in runs:
                runs[solver].append(run_once(solver, k))
        med = {s: {c: float(np.median([r[c] for r in rs])) for c in
                   ("imports", "build", "solves", "total", "worst")} for s, rs in runs.items()}
        df = max(abs(x - y) for x, y in zip(runs["caspar"][0]["f"], runs["ipopt"][0]["f"]))
        for s in runs:
            m = med[s]
            rows.append(dict(solver=s, k=k, imports_s=m["imports"], build_s=m["build"],
                             solves_s=m["solves"], total_s=m["total"],
                             worst_solve_ms=1e3 * m["worst"],
                             ratio=m["total"] / med["ipopt"]["total"],
                             max_df=df if s == "caspar" else 0.0))
            print(f"{s:7s} k={k:4d}  imports {m['imports']:.2f}s  build {m['build']:.3f}s  "
                  f"solves {m['solves']:.3f}s  total {m['total']:.2f}s  "
                  f"worst {1e3 * m['worst']:.1f} ms  total / IPOPT "
                  f"{m['total'] / med['ipopt']['total']:.2f}", flush=True)
    if a.out:
        from benchmarks.runner import commit, hardware, write_meta, write_results

        write_results(a.out, COLUMNS, rows)
        hw = hardware()
        write_meta(os.path.join(a.out, "meta.json"), commit=commit(),
                   date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   hardware=f"{hw['cpu']}, {hw['cores']} cores (ratios within the run are "
                            "what count)",
                   sizes="three-link arm IK, k targets per process",
                   tol="the solvers' defaults (IPOPT's tol 1e-8 for both)",
                   command=" ".join(["python benchmarks/bench_small_cold.py",
                                     *(argv if argv is not None else sys.argv[1:])]))


if __name__ == "__main__":
    main()
