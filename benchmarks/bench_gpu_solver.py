"""Interior point on the CPU (NumPy + qdldl) vs the GPU (CUDA evaluator + cuDSS), and
IPOPT + MUMPS (casadi) when casadi is importable.

Problem: chained Rosenbrock objective with a chain of nonlinear equality constraints
(tests/test_gpu_solver.py::_chain_model), n = N + 2 variables, m = N constraints,
x0 = 0, built with caspar_backend.Graph.  Same tolerance everywhere (``--tol``, default
1e-8, IPOPT's and caspar's default).

For each size it prints: iterations, objective, solve wall time, and the time per
iteration split into evaluation / KKT assembly / factorization / solve / other (the
solver's own timers; on the GPU each timer synchronizes the device first).  One-time
costs are reported apart: CUDA compilation (first ``problem.evaluator('cuda')`` in this
process, disk cache permitting) and cuDSS's symbolic analysis (``plan``), which the
factorization column excludes.  GPU figures are the median of ``--repeat`` solves after
one warm-up solve.

    python benchmarks/bench_gpu_solver.py --sizes 10000 100000 [--no-gpu] [--no-ipopt]
        [--ipopt-max N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))

from caspar_backend import Graph, NLPModel, Problem  # noqa: E402

PHASES = ("function_evaluations", "kkt_assembly", "kkt_factorization", "kkt_solve", "other")
SHORT = dict(function_evaluations="eval", kkt_assembly="KKT asm", kkt_factorization="factor",
             kkt_solve="solve", other="other")


def chain_problem(N):
    g = Graph()
    x = [g.var(i) for i in range(N + 2)]
    p = g.param(0)
    obj = g.sum([100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(N)])
    cons = [3 * x[i + 1] ** 3 + 2 * x[i + 2] - 5
            + g.sin(x[i + 1] - x[i + 2]) * g.sin(x[i + 1] + x[i + 2])
            + 4 * x[i + 1] - x[i] * g.exp(x[i] - x[i + 1]) - 3 * p for i in range(N)]
    n, m = N + 2, len(cons)
    return Problem(NLPModel(g, obj, cons, -np.inf * np.ones(n), np.inf * np.ones(n),
                            np.zeros(m), np.zeros(m), p=[1.3]))


def ipopt_chain(N, tol):
    import casadi as cs

    x = cs.SX.sym("x", N + 2)
    obj = cs.sum1(100 * (x[1:N + 1] - x[:N] ** 2) ** 2 + (1 - x[:N]) ** 2)
    a, b, c = x[:N], x[1:N + 1], x[2:N + 2]
    g = 3 * b ** 3 + 2 * c - 5 + cs.sin(b - c) * cs.sin(b + c) + 4 * b - a * cs.exp(a - b) \
        - 3 * 1.3
    t0 = time.perf_counter()
    S = cs.nlpsol("s", "ipopt", {"x": x, "f": obj, "g": g},
                  {"ipopt": {"print_level": 0, "sb": "yes", "tol": tol}, "print_time": False})
    t_setup = time.perf_counter() - t0
    t0 = time.perf_counter()
    r = S(x0=np.zeros(N + 2), lbg=0, ubg=0)
    t = time.perf_counter() - t0
    st = S.stats()
    return dict(status=st["return_status"], iter=int(st["iter_count"]), f=float(r["f"]),
                t=t, setup=t_setup)


def per_iter(res, analysis=0.0):
    it = max(1, res.iterations)
    t = dict(res.timings)
    t["kkt_factorization"] = max(0.0, t["kkt_factorization"] - analysis)
    return {k: 1e3 * t[k] / it for k in PHASES}


def run_size(N, args, out):
    row = dict(N=N)
    t0 = time.perf_counter()
    prob = chain_problem(N)
    row.update(n=prob.n, m=prob.m, build_s=time.perf_counter() - t0)
    opts = dict(print_level=0, tol=args.tol)
    if not args.no_cpu:
        rc = prob.solve(device="cpu", **opts)
        row["cpu"] = dict(status=rc.status, iter=rc.iterations, f=rc.f,
                          t=rc.timings["total"], per_iter_ms=per_iter(rc))
    if not args.no_gpu:
        t0 = time.perf_counter()
        prob.evaluator("cuda")
        compile_s = time.perf_counter() - t0
        runs = []
        for k in range(args.repeat + 1):
            rg = prob.solve(device="cuda", **opts)
            if k:
                runs.append(rg)
        med = sorted(runs, key=lambda r: r.timings["total"])[len(runs) // 2]
        an = med.extra["analysis_seconds"]
        row["gpu"] = dict(status=med.status, iter=med.iterations, f=med.f,
                          t=med.timings["total"] - an, t_all=[r.timings["total"] for r in runs],
                          analysis_s=an, compile_s=compile_s,
                          per_iter_ms=per_iter(med, an))
    if not args.no_ipopt and N <= args.ipopt_max:
        try:
            row["ipopt"] = ipopt_chain(N, args.tol)
        except ImportError:
            pass
    out.append(row)
    print(json.dumps(row), flush=True)


def table(rows):
    lines = ["| N | n+m | solver | status | iter | objective | solve s | per iteration (ms): "
             + " / ".join(SHORT[k] for k in PHASES) + " | one-time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for key in ("cpu", "gpu", "ipopt"):
            d = r.get(key)
            if d is None:
                continue
            if key == "ipopt":
                split, once = "—", f"casadi setup {d['setup']:.1f} s"
                name = "IPOPT+MUMPS"
            else:
                split = " / ".join(f"{d['per_iter_ms'][k]:.2f}" for k in PHASES)
                once = (f"compile {d['compile_s']:.1f} s, cuDSS analysis "
                        f"{d['analysis_s']:.2f} s" if key == "gpu" else "—")
                name = "caspar CPU (qdldl)" if key == "cpu" else "caspar GPU (cuDSS)"
            lines.append(f"| {r['N']} | {r['n'] + r['m']} | {name} | {d['status']} | "
                         f"{d['iter']} | {d['f']:.10g} | {d['t']:.3f} | {split} | {once} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--no-ipopt", action="store_true")
    ap.add_argument("--ipopt-max", type=int, default=10 ** 9,
                    help="IPOPT only up to this N (casadi's setup takes 20 s at N=1e5)")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for N in args.sizes:
        run_size(N, args, rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()
