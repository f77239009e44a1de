"""Setup time of a plain CasADi SX AC-OPF: read, grouped and derived (issue 20).

The model is :func:`benchmarks.models.acopf.acopf_casadi_polar` (variables vm, va,
pg, qg; the branch flows written out in the balances and thermal limits; no
``.map``), or with ``--model suite`` the benchmark suite's own AC-OPF
(:func:`benchmarks.models.acopf.acopf_casadi`: branch flows as variables), built once
per child process and not timed.  Each reader runs in its
own child process, which times

* ``read``    ``casadi_to_model``: casadi's Function, the instruction program read,
              terms grouped into template blocks (bulk) or the DAG built (per node);
* ``problem`` ``Problem(model)``: pattern groups and their derivatives;
* ``total``   ``from_casadi`` (both), wall and process CPU seconds,

and reports the instruction count, the number of pattern groups, whether the bulk
reader took the program (``taken``: else it read it per node) and the child's peak
resident memory (model building included).  Readers: ``bulk`` (the default
for large SX programs) and ``per-node`` (``bulk=False``, the reference path), both with
the on-disk problem cache off; ``cached``: ``from_casadi`` (``total`` only) in two child
processes sharing a cache folder with no problem stored -- the first builds and stores
(``cache`` = stored), the second loads (hit); the folder first receives, untimed, what
``caspar warmup`` builds once per machine (the bulk reader's C++ libraries and compiled
loops); ``ipopt``: casadi's
``nlpsol(..., 'ipopt')`` construction (``total``), for scale.  With ``--device cuda``
the ``cached`` rows also compile the evaluator for the GPU (``Problem.evaluator('cuda')``:
code generation and NVRTC, its kernels cached in the same folder -- ``compile``, part of
``total``), so cold is read + group + derive + compile with empty caches.

    python benchmarks/bench_setup_sx.py [--cases case9241_pegase ...] [--repeat 3]
        [--readers bulk per-node cached ipopt] [--device cpu|cuda] [--model polar|suite]
        [--out DIR]

``--out DIR`` writes the medians as ``DIR/results.csv`` with ``DIR/meta.json`` (the
layout of ``benchmarks/results/``, rendered by ``python -m benchmarks report``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


#: --model: the function of benchmarks.models.acopf that builds the SX problem
MODELS = {"polar": "acopf_casadi_polar", "suite": "acopf_casadi"}


def child(case: str, reader: str) -> dict:
    if reader == "warmup":
        # what ``caspar warmup`` builds once per machine (the bulk reader's C++
        # libraries and compiled loops) into this process's CASPAR_CACHE_DIR
        from caspar_backend.adapters.casadi.warmup import bulk_reader

        return dict(case=case, reader=reader, total=bulk_reader())
    import casadi as ca

    from benchmarks.models import acopf
    from caspar_backend.adapters.casadi import casadi_to_model
    from caspar_backend.problem import Problem

    build = MODELS[os.environ.get("CASPAR_SETUP_MODEL", "polar")]
    nlp, _args = getattr(acopf, build)(case)
    k = ca.Function("count", [nlp["x"]], [nlp["f"], nlp["g"]]).n_instructions()
    if reader in ("cached", "ipopt"):
        from caspar_backend.adapters.casadi import from_casadi

        device = os.environ.get("CASPAR_SETUP_DEVICE", "cpu")
        if device == "cuda":    # the CUDA context and imports are not setup: made untimed
            import cupy

            cupy.zeros(1).sum()
        t0, c0 = time.perf_counter(), time.process_time()
        extra = {}
        if reader == "ipopt":
            ca.nlpsol("S", "ipopt", nlp)
            groups, cache = None, None
        else:
            prob = from_casadi(nlp)
            groups, cache = len(prob.groups), prob.model.meta.get("problem_cache")
            if device == "cuda":
                tc = time.perf_counter()
                prob.evaluator("cuda")
                extra = dict(compile=time.perf_counter() - tc)
        t1, c1 = time.perf_counter(), time.process_time()
        return dict(case=case, reader=reader, instructions=k, total=t1 - t0,
                    total_cpu=c1 - c0, groups=groups, cache=cache, **extra,
                    rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    bulk = {"bulk": True, "per-node": False}[reader]
    t0, c0 = time.perf_counter(), time.process_time()
    model = casadi_to_model(nlp, bulk=bulk)
    t1, c1 = time.perf_counter(), time.process_time()
    prob = Problem(model)
    t2, c2 = time.perf_counter(), time.process_time()
    return dict(case=case, reader=reader, instructions=k, n=prob.n, m=prob.m,
                read=t1 - t0, problem=t2 - t1, total=t2 - t0, total_cpu=c2 - c0,
                read_cpu=c1 - c0, groups=len(prob.groups), taken="bulk" in model.meta,
                rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def run(case: str, reader: str, env=None) -> dict:
    p = subprocess.run([sys.executable, __file__, "--child", case, reader],
                       capture_output=True, text=True,
                       env={**os.environ, "CASPAR_PROBLEM_CACHE": "0", **(env or {})})
    if p.returncode != 0:
        return dict(case=case, reader=reader,
                    error=(p.stderr.strip().splitlines() or ["killed"])[-1])
    return json.loads(p.stdout.strip().splitlines()[-1])


def runs_of(case: str, reader: str, repeat: int, device: str = "cpu") -> dict:
    """``{row label: [child results]}``: ``repeat`` runs of ``reader`` (``cached``: a
    cold and a warm process per run, each pair with a fresh cache folder)."""
    if reader != "cached":
        return {reader: [run(case, reader) for _ in range(repeat)]}
    out = {"cached (cold)": [], "cached (warm)": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            env = {"CASPAR_CACHE_DIR": tmp, "CASPAR_PROBLEM_CACHE": "1",
                   "CASPAR_SETUP_DEVICE": device}
            # cold: no problem stored, the machine's one-time builds present (untimed)
            run(case, "warmup", env)
            out["cached (cold)"].append(run(case, "cached", env))
            out["cached (warm)"].append(run(case, "cached", env))
    return out


#: results.csv's columns, in order
CSV_COLUMNS = ("case", "reader", "device", "instructions", "groups", "taken", "cache",
               "read", "read_cpu", "problem", "compile", "total", "total_cpu", "rss_mb",
               "repeat")


def median_row(ok: list, label: str, repeat: int) -> dict:
    """One row: the first run's facts, the medians of its times."""
    row = dict(ok[0], reader=label, repeat=repeat)
    for key in ("read", "read_cpu", "problem", "compile", "total", "total_cpu", "rss_mb"):
        if all(key in r for r in ok):
            row[key] = statistics.median(r[key] for r in ok)
    return row


def write_folder(out: str, rows: list, args, argv) -> None:
    """``out/results.csv`` (:data:`CSV_COLUMNS`) and ``out/meta.json``."""
    import casadi as ca

    from benchmarks.runner import commit, hardware, write_meta, write_results

    write_results(out, CSV_COLUMNS, rows)
    hw = hardware()
    write_meta(os.path.join(out, "meta.json"), commit=commit(),
               date=time.strftime("%Y-%m-%d %H:%M %Z"),
               hardware=f"{hw['cpu']}, {hw['cores']} cores (load average "
                        f"{os.getloadavg()[0]:.1f} at the end), CasADi {ca.__version__}",
               sizes=", ".join(args.cases) + (
                   " (PGLib): the polar AC-OPF as one plain SX graph "
                   "(benchmarks.models.acopf.acopf_casadi_polar)" if args.model == "polar"
                   else " (PGLib): the benchmark suite's AC-OPF, branch flows as variables "
                        "(benchmarks.models.acopf.acopf_casadi)"),
               tol=("setup only (no solve): read = casadi_to_model, Problem = grouping and "
                    "derivation; cached: from_casadi in a first and a second process "
                    "sharing an empty problem cache (--device cuda: and the GPU "
                    "evaluator compiled, in total); ipopt: casadi's nlpsol construction; "
                    f"medians of {args.repeat}"),
               command=" ".join(["python benchmarks/bench_setup_sx.py", *argv]))
    print(f"wrote {out}/results.csv and meta.json")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", default=["case9241_pegase"])
    ap.add_argument("--readers", nargs="*", default=["bulk", "per-node", "cached", "ipopt"])
    ap.add_argument("--repeat", type=int, default=3, help="runs per reader (medians)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: the cached rows also compile the GPU evaluator")
    ap.add_argument("--model", choices=sorted(MODELS), default="polar",
                    help="polar: the plain SX polar AC-OPF; suite: the runner's AC-OPF")
    ap.add_argument("--out", help="write results.csv and meta.json into this folder")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(child(*a.child)))
        return
    os.environ["CASPAR_SETUP_MODEL"] = a.model     # the children build this model
    print("| case | reader | instructions | groups | read s (CPU) | Problem s | total s "
          "(CPU) | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    rows = []
    for case in a.cases:
        for reader in a.readers:
            for label, runs in runs_of(case, reader, a.repeat, a.device).items():
                ok = [r for r in runs if "error" not in r]
                for r in runs:
                    print(json.dumps(r), file=sys.stderr, flush=True)
                if not ok:
                    print(f"| {case} | {label} | failed: {runs[0]['error']} |")
                    continue
                r = dict(median_row(ok, label, a.repeat), device=a.device)
                rows.append(r)

                def f(key):
                    return f"{r[key]:.2f}" if key in r else "—"

                groups = "—" if r["groups"] is None else r["groups"]
                print(f"| {case} | {label} | {r['instructions']:,} | {groups} | "
                      f"{f('read')} ({f('read_cpu')}) | {f('problem')} | "
                      f"{f('total')} ({f('total_cpu')}) | {f('rss_mb')} |", flush=True)
    if a.out:
        write_folder(a.out, rows, a, argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])
    main()
