"""caspar with linear_solver qdldl and pardisomkl against IPOPT (MUMPS, casadi wheel) on
COPS 3.0 at the report's sizes and PGLib typical cases: status, iterations, objective and
solve seconds per solver, one JSON line per model (argv: output file, suites).

    python cmp_linear_solvers.py OUT.jsonl cops,acopf [max_buses]

SOLVERS=qdldl in the environment: caspar with qdldl only (and IPOPT); OPTS='{"k": v}'
(JSON): more options for caspar's solves.
"""
import json
import os
import sys
import time

sys.path.insert(0, "/work/main")
import numpy as np  # noqa: E402

import caspar_backend as cb  # noqa: E402
from benchmarks.cases import cops_size  # noqa: E402
from benchmarks.models.cops import PROBLEMS  # noqa: E402


def caspar_runs(P, opts):
    out = {}
    for ls in os.environ.get("SOLVERS", "qdldl,pardisomkl").split(","):
        t = time.perf_counter()
        try:
            r = P.solve(linear_solver=ls, print_level=0, max_iter=3000, max_wall_time=900,
                        compiled_path="no", **opts, **json.loads(os.environ.get("OPTS", "{}")))
            out[ls] = dict(status=r.status, it=r.iterations, f=float(r.f),
                           s=time.perf_counter() - t)
        except Exception as e:   # noqa: BLE001  -- recorded, the table goes on
            out[ls] = dict(status=f"ERROR {type(e).__name__}: {e}"[:100], it=-1,
                           f=float("nan"), s=time.perf_counter() - t)
    return out


def cops(fh):
    from tests.support.pyomo_ipopt_reference import solve_reference
    for name, p in PROBLEMS.items():
        size = cops_size(p, "1")
        m = p(size)
        t = time.perf_counter()
        ref = solve_reference(m)
        ref_s = time.perf_counter() - t
        P = cb.from_pyomo(p(size))
        row = dict(suite="cops", model=f"{name}_{size}", n=P.nx if hasattr(P, "nx") else None,
                   ipopt=dict(status=ref.status, it=ref.iterations, f=ref.objective, s=ref_s))
        row.update(caspar_runs(P, {}))
        print(json.dumps(row), file=fh, flush=True)
        print(row["model"], {k: (v["status"], v["it"], v["f"], round(v["s"], 2))
                             for k, v in row.items() if isinstance(v, dict)}, flush=True)


def acopf(fh, max_buses):
    from benchmarks.models.acopf import acopf_casadi, acopf_data
    from benchmarks.models.matpower import load_pglib, pglib_cases
    from benchmarks.models.reference import ipopt_casadi
    for name in pglib_cases("typ", max_buses=max_buses, min_buses=0):
        d = acopf_data(load_pglib(name))
        nlp, args = acopf_casadi(d)
        args.pop("data", None)
        P = cb.from_casadi(nlp, **args)
        ref = ipopt_casadi(nlp, args, tol=1e-8, max_iter=3000, options={"max_wall_time": 900})
        row = dict(suite="acopf", model=name, n=d.n,
                   ipopt=dict(status=ref.status, it=ref.iterations, f=ref.f, s=ref.solve))
        row.update(caspar_runs(P, dict(tol=1e-8)))
        print(json.dumps(row), file=fh, flush=True)
        print(row["model"], {k: (v["status"], v["it"], v["f"], round(v["s"], 2))
                             for k, v in row.items() if isinstance(v, dict)}, flush=True)


if __name__ == "__main__":
    out, suites = sys.argv[1], sys.argv[2].split(",")
    with open(out, "a") as fh:
        if "cops" in suites:
            cops(fh)
        if "acopf" in suites:
            acopf(fh, int(sys.argv[3]) if len(sys.argv) > 3 else 2000)
