"""The benchmark runner, ``python -m benchmarks`` (also ``caspar bench`` from a checkout).

For every case of the chosen suites (:mod:`benchmarks.cases`) it measures IPOPT and
caspar (:mod:`benchmarks.measure`) and writes under ``--out`` (default
``benchmarks/out/``, git-ignored):

* ``results.csv`` -- one row per case, columns :data:`benchmarks.table.COLUMNS`;
* ``results.md`` -- a header (hardware, commit, date, tolerance) and one table;
* ``meta.json`` -- commit, date, hardware, tolerance and command, for the report
  (``benchmarks/results/README.md``);
* ``solve_time.png`` -- log-log solve time against n (skipped with a note when
  matplotlib is missing).

Progress lines go to stderr.  Exit status: 0 when every case ran and every caspar
objective matched IPOPT's, 1 otherwise, 2 on a usage or device error.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import subprocess
import sys
import time

from benchmarks.cases import (LSQ_OBS_PER_POINT, LSQ_POINTS_PER_CAMERA, PGLIB_VARIANTS, SUITES,
                              acopf_cases, cops_cases, lsq_cases, ocp_cases)
from benchmarks.measure import REL_TOL, error_text, match_word, run_case
from benchmarks.plot import plot
from benchmarks.table import COLUMNS, markdown


class BenchError(RuntimeError):
    """A usage error of the runner (unknown suite, no models selected)."""


def _checkout() -> str:
    """The source checkout holding this ``benchmarks`` package."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def hardware() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = ""
    from caspar_backend.device import cuda_problem

    if cuda_problem() is None:
        try:
            import cupy

            name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
            gpu = name.decode() if isinstance(name, bytes) else str(name)
            gpu += f", CuPy {cupy.__version__}"
        except Exception:
            gpu = "CUDA device (name unavailable)"
        try:
            from caspar_backend.linsolve.cudss_handle import cudss_version

            gpu += ", cuDSS " + ".".join(str(v) for v in cudss_version())
        except Exception:
            pass
    return dict(cpu=cpu, cores=os.cpu_count() or 0, gpu=gpu)


def commit() -> str:
    try:
        return subprocess.check_output(["git", "-C", _checkout(), "rev-parse", "--short", "HEAD"],
                                       text=True, stderr=subprocess.DEVNULL).strip() or "unknown"
    except Exception:
        return "unknown"


def gpu_devices(device: str) -> tuple[list[str], str]:
    """The caspar devices to run and a note on the GPU."""
    if device == "cpu":
        return ["cpu"], "GPU not requested (--device cpu)"
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is None:
        return ["cpu", "cuda"], "GPU usable"
    if device == "cuda":
        from caspar_backend.errors import DeviceError

        raise DeviceError(f"--device cuda: {why}")
    return ["cpu"], "no usable GPU: " + why.split(";")[0]


def write_results(out: str, columns, rows) -> None:
    """``out/results.csv`` (the folder made if missing) with ``columns`` in order; keys of
    a row outside them are left out."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def write_meta(path: str, **meta) -> None:
    """``meta.json`` beside ``results.csv``: commit, date, hardware, tol, command (what
    ``benchmarks/report.py`` states above each table)."""
    with open(path, "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--suite", default="all", help="acopf, cops, ocp, lsq, all, or a comma list")
    ap.add_argument("--max-buses", type=int, default=500, help="largest PGLib case (buses)")
    ap.add_argument("--min-buses", type=int, default=0, help="smallest PGLib case (buses)")
    ap.add_argument("--variants", default="typ",
                    help="PGLib operating conditions, comma-separated: typ, api, sad")
    ap.add_argument("--acopf-front", choices=("casadi", "pyomo"), default="casadi",
                    help="which AC-OPF model caspar and IPOPT solve")
    ap.add_argument("--pyomo-reader", choices=("templates", "walker"), default="templates",
                    help="how caspar reads Pyomo models (COPS, --acopf-front pyomo): "
                         "from_pyomo's default template reader, or the per-instance "
                         "walker (templates=False); the answers are the same")
    ap.add_argument("--cops-scale", choices=("small", "1", "10"), default="1",
                    help="COPS size: the report's (1), ten times the variables (10), "
                         "or the test sizes (small)")
    ap.add_argument("--ocp-N", default="1000,10000", help="OCP intervals, comma-separated")
    ap.add_argument("--lsq-sizes", default="1000,10000",
                    help="bundle-adjustment points, comma-separated (cameras: "
                         f"max(10, points // {LSQ_POINTS_PER_CAMERA}), {LSQ_OBS_PER_POINT} "
                         "observations per point)")
    ap.add_argument("--models", default="",
                    help="only these models (PGLib case names, COPS names, 'vanderpol', 'vanderpol_colloc', "
                         "'bundle')")
    ap.add_argument("--device", choices=("cpu", "cuda", "auto"), default="auto",
                    help="caspar devices: cpu only, or also the GPU (cuda: required; "
                         "auto: when usable)")
    ap.add_argument("--no-cpu", action="store_true",
                    help="with the GPU: skip caspar on the CPU (the table is GPU vs IPOPT)")
    ap.add_argument("--tol", type=float, default=1e-6, help="IPOPT's tol, both solvers")
    ap.add_argument("--max-iter", type=int, default=3000)
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="max_wall_time of each solve (s)")
    ap.add_argument("--ipopt-workers", type=int, default=0,
                    help="IPOPT's references computed ahead in this many worker processes "
                         "(its times then taken with that many solves sharing the host; "
                         "0: each case's IPOPT solve right before caspar's)")
    ap.add_argument("--out", default=None, help="output folder (default benchmarks/out/)")


def run(args, err=None) -> int:
    # sys.stderr looked up per call, not bound at import (a test's capture replaces it)
    err = sys.stderr if err is None else err
    # caspar's build column is a first build (read, group, derive, generate): the on-disk
    # problem cache would make a rerun's (or the second device's) a load; its warm
    # setup is measured apart (benchmarks/bench_setup_sx.py)
    os.environ.setdefault("CASPAR_PROBLEM_CACHE", "0")
    suites = SUITES if args.suite == "all" else tuple(s.strip() for s in args.suite.split(","))
    bad = [s for s in suites if s not in SUITES]
    if bad:
        raise BenchError(f"unknown suite(s) {bad}; use acopf, cops, ocp, lsq or all")
    names = {s.strip().removeprefix("pglib_opf_") for s in args.models.split(",")
             if s.strip()} or None
    devices, gpu_note = gpu_devices(args.device)
    if getattr(args, "no_cpu", False):
        if "cuda" not in devices:
            raise BenchError("--no-cpu needs the GPU (--device cuda, or auto with a usable GPU)")
        devices = [d for d in devices if d != "cpu"]
    out_dir = args.out or os.path.join(_checkout(), "benchmarks", "out")
    os.makedirs(out_dir, exist_ok=True)

    cases = []
    if "acopf" in suites:
        variants = tuple(v.strip() for v in getattr(args, "variants", "typ").split(",")
                         if v.strip())
        bad = [v for v in variants if v not in PGLIB_VARIANTS]
        if bad:
            raise BenchError(f"unknown PGLib variant(s) {bad}; use typ, api or sad")
        cases += list(acopf_cases(args.max_buses, names, args.acopf_front,
                                   getattr(args, "min_buses", 0), variants))
    if "cops" in suites:
        cases += list(cops_cases(args.cops_scale, names))
    if "ocp" in suites:
        Ns = [int(float(s)) for s in str(args.ocp_N).split(",") if s.strip()]
        cases += list(ocp_cases(Ns, names))
    if "lsq" in suites:
        pts = [int(float(s)) for s in str(getattr(args, "lsq_sizes", "1000,10000")).split(",")
               if s.strip()]
        cases += list(lsq_cases(pts, names))
    if not cases:
        raise BenchError("no models selected")

    import casadi

    hw = hardware()
    date = time.strftime("%Y-%m-%d %H:%M %Z")
    header = [
        "# caspar benchmark",
        "",
        f"- commit: {commit()}; date: {date}",
        f"- hardware: {hw['cpu']}, {hw['cores']} cores; GPU: {hw['gpu'] or 'none'} "
        f"({gpu_note})",
        f"- tolerance: tol = {args.tol:g} (both solvers); objectives match when "
        f"|f - f_IPOPT| <= {REL_TOL:g} * max(1, |f_IPOPT|)",
        f"- reference: IPOPT (casadi {casadi.__version__} wheel, MUMPS); Pyomo models through "
        "Pyomo's NL writer + casadi.NlpBuilder.import_nl",
        f"- suites: {', '.join(suites)}; AC-OPF front: {args.acopf_front}; Pyomo reader: "
        f"{getattr(args, 'pyomo_reader', 'templates')}; PGLib variants: "
        f"{getattr(args, 'variants', 'typ')}; COPS scale: "
        f"{args.cops_scale}; times in wall seconds (model = building the model; build = "
        "NL write/nlpsol setup or caspar adapter + codegen; solve = the solve call)",
    ]
    if "lsq" in suites:
        header.append("- lsq (bundle adjustment): IPOPT gets the assembled exact Hessian "
                      "(nlpsol hess_lag, built in IPOPT's build time) and evaluates f, grad f "
                      "on the unexpanded MX graph")
    workers = int(getattr(args, "ipopt_workers", 0) or 0)
    ahead = None
    if workers > 0:
        from benchmarks.ipopt_ahead import IpoptAhead

        # forked before the GPU path is set up (general_path: CuPy's kernels, cuDSS's
        # library); the workers never touch the GPU
        ahead = IpoptAhead(cases, workers, args.tol, args.max_iter, args.time_limit)
        header.append(f"- IPOPT's references computed ahead in {workers} worker processes "
                      "(its times taken with that many IPOPT solves sharing the host)")
    device_init = None
    if "cuda" in devices:
        # once per process, before the first case: the CUDA context, CuPy's and
        # nvmath's imports and the GPU path's own kernels (caspar warmup's GPU step) --
        # else the first GPU case alone pays ~1 s of process start-up (more on a machine
        # never warmed up), as IPOPT's library loading is not in its build or solve
        from caspar_backend.gpu_warmup import general_path

        device_init = general_path()
        header.append(f"- GPU initialised before the first case: {device_init:.2f} s (CUDA "
                      "context, imports, the GPU interior point's kernels)")
    if "cpu" in devices:
        # likewise the compiled interior point's kernels (small CPU problems,
        # compiled/dispatch.py): loaded once per process, compiled first where this
        # machine has none -- else the second case alone pays Numba's start-up
        from caspar_backend.compiled import available
        from caspar_backend.compiled.dispatch import kernels_ready

        if available():
            t = time.perf_counter()
            kernels_ready(wait=True)
            header.append(f"- the compiled interior point's kernels (CPU) loaded before the "
                          f"first case: {time.perf_counter() - t:.2f} s")
    header.append("")
    rows = []
    for k, c in enumerate(cases):
        print(f"[{k + 1}/{len(cases)}] {c.suite} {c.name} {c.size} ...", file=err, flush=True)
        try:
            r = run_case(c, devices, args.tol, args.max_iter, args.time_limit,
                         pyomo_templates=getattr(args, "pyomo_reader", "templates")
                         == "templates", reference=None if ahead is None else ahead.reference)
        except Exception as e:  # a broken model must not stop the run
            print(f"    failed: {error_text(e)}", file=err, flush=True)
            continue
        rows.append(r)
        # written as it grows: a run stopped by a time limit keeps the rows it has
        write_results(out_dir, COLUMNS, rows)
        parts = [f"IPOPT {r['ipopt_solve_s']:.2f}s f={r['ipopt_f']:.8g}"]
        for dev in devices:
            parts.append(f"caspar-{dev} {r[f'{dev}_solve_s']:.2f}s {r[f'{dev}_status']} "
                         f"match={match_word(r[f'{dev}_match'])}")
        print("    " + "; ".join(parts), file=err, flush=True)

    if ahead is not None:
        ahead.close()
    write_results(out_dir, COLUMNS, rows)
    csv_path = os.path.join(out_dir, "results.csv")
    note = plot(rows, os.path.join(out_dir, "solve_time.png"),
                f"caspar vs IPOPT, tol {args.tol:g}, {hw['cpu']}" + (f", {hw['gpu']}" if hw["gpu"]
                                                                      else ""))
    mismatches = [f"{r['model']} {r['size']} ({d})" for r in rows for d in devices
                  if r[f"{d}_match"] is False]
    unreferenced = [f"{r['model']} {r['size']} ({r['ipopt_status']})" for r in rows
                    if not math.isfinite(r["ipopt_f"])]
    header.append(f"- {note}")
    header.append("")
    summary = (f"\n{len(rows)}/{len(cases)} models ran; objective mismatches: "
               f"{', '.join(mismatches) if mismatches else 'none'}"
               + (f"; no IPOPT reference: {', '.join(unreferenced)}" if unreferenced else "")
               + "\n")
    write_meta(os.path.join(out_dir, "meta.json"), commit=commit(), date=date,
               hardware=f"{hw['cpu']}, {hw['cores']} cores" + (f"; GPU: {hw['gpu']}"
                                                               if "cuda" in devices else ""),
               tol=args.tol, command=" ".join(["python -m benchmarks", *sys.argv[1:]]),
               **({} if ahead is None else
                  {"ipopt_workers": f"{workers} processes computed IPOPT's references "
                                    "ahead (its times with that many solves at once)"}),
               reference=f"IPOPT (casadi {casadi.__version__} wheel, MUMPS)",
               **({} if device_init is None else
                  {"device_init": f"{device_init:.2f} s before the first case (CUDA context, "
                                  "imports, the GPU interior point's kernels)"}))
    md_path = os.path.join(out_dir, "results.md")
    with open(md_path, "w") as f:
        f.write(markdown(rows, header, devices) + summary)
    print(f"wrote {md_path}, {csv_path}; {note}", file=err, flush=True)
    return 0 if not mismatches and len(rows) == len(cases) else 1


def main(argv=None, prog: str = "python -m benchmarks") -> int:
    ap = argparse.ArgumentParser(prog=prog, description="caspar vs IPOPT on real models "
                                 "(PGLib AC-OPF, COPS 3.0, optimal control, bundle "
                                 "adjustment)")
    add_arguments(ap)
    return cli(ap.parse_args(argv))


def cli(args) -> int:
    from caspar_backend.errors import CasparError

    try:
        return run(args)
    except (BenchError, CasparError) as e:
        print(f"caspar: {e}", file=sys.stderr)
        return 2
