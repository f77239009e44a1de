"""caspar on the GPU (CUDA evaluator + cuDSS) against IPOPT + MUMPS on the same machine's
CPU, and caspar on the CPU (NumPy + qdldl), on three scalable problems:

* ``chain``: the constrained chained Rosenbrock problem (:mod:`benchmarks.models.chain`,
  built from two TemplateBlocks), n = N + 2, m = N;
* ``ocp``: the Van der Pol direct multiple-shooting problem built with casadi's
  ``Function.map`` (``caspar_backend.adapters.casadi.models.vanderpol_ocp``),
  n = 3N + 2, m = 2N, read by caspar's CasADi adapter;
* ``colloc``: the same control problem by direct collocation (degree 3, Legendre points)
  built with ``Function.map`` (``caspar_backend.adapters.casadi.models.vanderpol_collocation``),
  n = 9N + 2, m = 8N (N = 1111, 11111, 111111 for n = 10^4, 10^5, 10^6);
* ``acopf``: PGLib-OPF AC optimal power flow (:mod:`benchmarks.models.acopf`, the CasADi
  model), sizes are case names;
* ``lsq``: synthetic bundle adjustment (:mod:`benchmarks.models.bundle`, ``Function.map``
  over the observations), sizes are point counts with the runner's camera count
  (``benchmarks.cases.lsq_problem``) and 4 observations per point; n = 9 nc + 3 np,
  unconstrained.  IPOPT gets the assembled exact Hessian (casadi's own Hessian
  colouring of the mapped MX graph is the slow part of its setup), as in the runner.

For each size and each tolerance (``--tols``, IPOPT's ``tol``, the same for every
solver) it records iterations, objective, solve wall time and the time per iteration
split into evaluation / KKT assembly / factorization / solve / other (the solver's own
timers; on the GPU each synchronizes the device first), and the one-time costs apart:
model build, caspar build (adapter + grouping + derivatives), CUDA compilation cold
(first ``evaluator('cuda')``; run with an empty ``CASPAR_CACHE_DIR`` for a true cold
figure) and from the disk cache (a second evaluator), and cuDSS's symbolic analysis,
which the GPU solve time and factorization column exclude (the GPU row is the median of
``--repeat`` solves after one warm-up solve).  IPOPT's time is ``nlpsol`` call time (its
setup, which builds casadi's derivative functions, is listed apart).

    python benchmarks/bench_gpu_solver.py --problem chain --sizes 10000 100000 1000000 \\
        --tols 1e-6 1e-8 [--no-cpu] [--cpu-max N] [--ipopt-max N] [--repeat 3] [--json f]

A table (markdown) is printed last; one JSON line per (size, tol) as it goes.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PHASES = ("function_evaluations", "kkt_assembly", "kkt_factorization", "kkt_solve", "other")
SHORT = dict(function_evaluations="eval", kkt_assembly="KKT asm", kkt_factorization="factor",
             kkt_solve="solve", other="other")


# ----------------------------------------------------------------------- problems
def build(problem: str, size: str):
    """(caspar Problem, casadi (nlp, args) for IPOPT, seconds to build the model,
    seconds for caspar's build)."""
    from caspar_backend import Problem

    t0 = time.perf_counter()
    if problem == "chain":
        from benchmarks.models.chain import chain_blocks, chain_casadi

        N = int(float(size))
        model = chain_blocks(N)
        t1 = time.perf_counter()
        prob = Problem(model)
        t2 = time.perf_counter()
        return prob, (lambda: chain_casadi(N)), t1 - t0, t2 - t1
    if problem in ("ocp", "colloc"):
        from caspar_backend.adapters.casadi import models

        make = models.vanderpol_ocp if problem == "ocp" else models.vanderpol_collocation
        nlp, args = make(int(float(size)))
    elif problem == "acopf":
        from benchmarks.models.acopf import acopf_casadi

        nlp, args = acopf_casadi(size)
        args.pop("data", None)
    elif problem == "lsq":
        from benchmarks.cases import lsq_problem

        nlp, args, setup = lsq_problem(int(float(size)))
        import caspar_backend as cb

        t1 = time.perf_counter()
        prob = cb.from_casadi(nlp, **args)
        t2 = time.perf_counter()
        return prob, (lambda: (nlp, args, setup)), t1 - t0, t2 - t1
    else:
        raise SystemExit(f"unknown problem {problem!r}")
    import caspar_backend as cb

    t1 = time.perf_counter()
    prob = cb.from_casadi(nlp, **args)
    t2 = time.perf_counter()
    return prob, (lambda: (nlp, args)), t1 - t0, t2 - t1


def ipopt(nlp_args, tol):
    """``nlp_args()``: ``(nlp, args)`` or ``(nlp, args, setup)`` (nlpsol options timed as
    IPOPT's setup)."""
    from benchmarks.models.reference import ipopt_casadi

    nlp, args, *setup = nlp_args()
    r = ipopt_casadi(nlp, args, tol=tol, expand_mx=True,
                     setup=setup[0] if setup else None)
    return dict(status=r.status, iter=r.iterations, f=r.f, t=r.solve, setup=r.build)


def summary(r, key="cpu", analysis=0.0, **more):
    from benchmarks.measure import phase_ms

    return dict(status=r.status, iter=r.iterations, f=r.f,
                t=r.timings["total"] - analysis, per_iter_ms=phase_ms(r),
                setup_s=r.timings.get("setup", 0.0),
                kkt=r.extra.get("kkt_system", "augmented"), **more)


# ----------------------------------------------------------------------- running
def run_size(problem, size, args, out):
    prob, nlp_args, model_s, build_s = build(problem, size)
    n_count = float(size) if problem != "acopf" else prob.n
    base = dict(problem=problem, size=size, n=prob.n, m=prob.m, model_s=model_s,
                build_s=build_s)
    compile_s = cached_s = None
    if not args.no_gpu:
        t0 = time.perf_counter()
        prob.evaluator("cuda")
        compile_s = time.perf_counter() - t0
        prob._evaluators.pop("cuda", None)
        t0 = time.perf_counter()
        prob.evaluator("cuda")
        cached_s = time.perf_counter() - t0
    for tol in args.tols:
        row = dict(base, tol=tol)
        opts = dict(print_level=0, tol=tol, max_iter=args.max_iter,
                    max_wall_time=args.time_limit, **args.extra_opts)
        if not args.no_gpu:
            runs = []
            for k in range(args.repeat + 1):
                rg = prob.solve(device="cuda", **opts)
                if k:
                    runs.append(rg)
                if rg.timings["total"] > 60:      # long solves: no repeats
                    runs = runs or [rg]
                    break
            med = sorted(runs, key=lambda r: r.timings["total"])[len(runs) // 2]
            an = med.extra["analysis_seconds"]
            row["gpu"] = summary(med, analysis=an, analysis_s=an, compile_s=compile_s,
                                 cached_s=cached_s, t_all=[r.timings["total"] for r in runs])
        if not args.no_cpu and n_count <= args.cpu_max:
            row["cpu"] = summary(prob.solve(device="cpu", **opts))
        if not args.no_ipopt and n_count <= args.ipopt_max:
            row["ipopt"] = ipopt(nlp_args, tol)
            if "gpu" in row:
                row["gpu_vs_ipopt"] = row["ipopt"]["t"] / row["gpu"]["t"]
        out.append(row)
        print(json.dumps(row), flush=True)


def table(rows):
    lines = ["| problem | size | n | m | tol | solver | status | iter | objective | solve s | "
             "per iteration ms: " + " / ".join(SHORT[k] for k in PHASES) + " | one-time |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        head = f"| {r['problem']} | {r['size']} | {r['n']} | {r['m']} | {r['tol']:g} |"
        for key in ("gpu", "cpu", "ipopt"):
            d = r.get(key)
            if d is None:
                continue
            if key == "ipopt":
                split, once, name = "—", f"casadi setup {d['setup']:.1f} s", "IPOPT+MUMPS (CPU)"
            else:
                split = " / ".join(f"{d['per_iter_ms'][k]:.2f}" for k in PHASES)
                once = (f"model {r['model_s']:.1f} s, caspar build {r['build_s']:.1f} s, "
                        f"solver setup {d.get('setup_s', 0.0):.3f} s (in solve s)")
                if key == "gpu":
                    once += (f", CUDA compile {d['compile_s']:.2f} s cold / "
                             f"{d['cached_s']:.2f} s cached, cuDSS analysis "
                             f"{d['analysis_s']:.2f} s")
                name = (f"caspar GPU (cuDSS, {d['kkt']})" if key == "gpu"
                        else f"caspar CPU (qdldl, {d['kkt']})")
            lines.append(f"{head} {name} | {d['status']} | {d['iter']} | {d['f']:.10g} | "
                         f"{d['t']:.3f} | {split} | {once} |")
        if "gpu_vs_ipopt" in r:
            lines.append(f"{head} **IPOPT / caspar-GPU** | | | | "
                         f"**{r['gpu_vs_ipopt']:.1f}x** | | |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problem", choices=("chain", "ocp", "colloc", "acopf", "lsq"),
                    default="chain")
    ap.add_argument("--sizes", nargs="+", default=["10000", "100000"],
                    help="N (chain, ocp, colloc), PGLib case names (acopf) or points (lsq)")
    ap.add_argument("--tols", type=float, nargs="+", default=[1e-6, 1e-8])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-iter", type=int, default=3000)
    ap.add_argument("--time-limit", type=float, default=500.0)
    ap.add_argument("--no-gpu", action="store_true")
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--no-ipopt", action="store_true")
    ap.add_argument("--cpu-max", type=float, default=1e5, help="caspar CPU only up to this size")
    ap.add_argument("--ipopt-max", type=float, default=1e9, help="IPOPT only up to this size")
    ap.add_argument("--opt", action="append", default=[],
                    help="extra caspar option key=value (e.g. kkt_system=condensed)")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    args.extra_opts = {}
    for kv in args.opt:
        k, v = kv.split("=", 1)
        try:
            v = float(v) if any(c in v for c in ".e") else int(v)
        except ValueError:
            pass
        args.extra_opts[k] = v
    rows = []
    for size in args.sizes:
        try:
            run_size(args.problem, size, args, rows)
        except Exception as e:   # one failing size must not lose the others' rows
            print(json.dumps(dict(problem=args.problem, size=size,
                                  error=f"{type(e).__name__}: {e}")), flush=True)
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=1)
    print(table(rows))
    return rows


if __name__ == "__main__":
    main()
