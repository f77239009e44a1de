"""Measuring one case: IPOPT as the reference, then caspar on each device.

For a :class:`benchmarks.cases.Case` :func:`run_case`

1. builds the model (timed on its own: ``model_s``);
2. solves it with IPOPT 3.14 from the casadi wheel -- CasADi models through
   ``casadi.nlpsol``, Pyomo models through Pyomo's NL writer and
   ``casadi.NlpBuilder.import_nl`` (:mod:`benchmarks.models.reference`), never through
   caspar's adapters -- in a child process with a deadline;
3. solves it with caspar on each requested device (Pyomo models through ``from_pyomo``,
   its template reader unless ``pyomo_templates=False``; ``<dev>_build_s``: adapter +
   evaluator code generation; ``<dev>_solve_s``: the solve call);
4. checks caspar's objective against IPOPT's: a match is
   ``|f - f_ipopt| <= 1e-6 max(1, |f_ipopt|)`` (the ``caspar demo`` convention), and
   both against the published value where there is one;
5. records caspar's milliseconds per iteration by the solver's own timers
   (``SolveResult.timings``): ``<dev>_eval_ms``, ``_kkt_asm_ms``, ``_factor_ms`` (the
   GPU's one-time cuDSS analysis taken out), ``_solve_ms``, ``_other_ms``;
6. with ``benchmarks/cuda_counters.py``'s library preloaded, the CUDA API calls per
   iteration: ``<dev>_launches_it``, ``_reads_it`` (device-to-host copies), ``_syncs_it``.

The row's keys are :data:`benchmarks.table.COLUMNS`.
"""

from __future__ import annotations

import math
import time

from benchmarks.cases import Case

REL_TOL = 1e-6


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
            send.send(("error", error_text(e)))

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


def _caspar(kind, obj, args, device, tol, max_iter, time_limit, pyomo_templates=True) -> dict:
    import caspar_backend as cb

    t = time.perf_counter()
    try:
        P = (cb.from_pyomo(obj, templates=pyomo_templates) if kind == "pyomo"
             else cb.from_casadi(obj, **args))
        P.evaluator(device)
        build = time.perf_counter() - t
    except Exception as e:
        return dict(build=time.perf_counter() - t, solve=float("nan"), status=error_text(e),
                    iter=-1, f=float("nan"))
    from benchmarks.cuda_counters import difference, snapshot

    t = time.perf_counter()
    try:
        before = snapshot()
        # (timing_statistics, the default 'yes': the phase columns exact on a GPU)
        r = P.solve(tol=tol, print_level=0, max_iter=max_iter, max_wall_time=time_limit,
                    device=device)
        solve = time.perf_counter() - t
        # the compiled path (small CPU problems) keeps no phase timers: no phase columns
        compiled = r.extra.get("path") == "compiled"
        out = dict(build=build, solve=solve, status=r.status, iter=int(r.iterations),
                   f=float(r.f), phases={} if compiled else phase_ms(r),
                   path="compiled" if compiled else "general",
                   counts=per_iteration_counts(difference(before, snapshot()), r))
        if device == "cuda":
            # the first solve's one-time cuDSS analysis of the KKT structure (in its
            # solve time; the later solves share it), and a compiled problem's later
            # solve, which pays the rest again
            out["analysis"] = float(r.extra.get("analysis_seconds", 0.0))
            t = time.perf_counter()
            P.solve(tol=tol, print_level=0, max_iter=max_iter, max_wall_time=time_limit,
                    device=device)
            out["resolve"] = time.perf_counter() - t
        return out
    except Exception as e:
        return dict(build=build, solve=time.perf_counter() - t, status=error_text(e), iter=-1,
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


#: counted CUDA API calls per iteration (benchmarks/cuda_counters.py, when preloaded)
COUNTS = (("launches_it", "launches"), ("reads_it", "reads"), ("syncs_it", "syncs"))


def per_iteration_counts(counts, result) -> dict:
    """Kernel launches, device-to-host reads and synchronizations per iteration of one
    solve, keyed by the short names of :data:`COUNTS` (empty when not counted)."""
    if counts is None:
        return {}
    it = max(1, int(result.iterations))
    return {short: counts[name] / it for short, name in COUNTS if counts[name] is not None}


def error_text(e) -> str:
    return f"ERROR {type(e).__name__}: {e}".replace("|", "/").replace("\n", " ")[:120]


def match_word(m) -> str:
    return "no reference" if m == "" else ("yes" if m else "NO")


def objectives_match(f, f_ref, rel: float = REL_TOL) -> bool:
    if not (math.isfinite(f) and math.isfinite(f_ref)):
        return False
    return abs(f - f_ref) <= rel * max(1.0, abs(f_ref))


def ipopt_reference(built, tol, max_iter=3000, time_limit=600.0):
    """(IPOPT's result, the number of constraints) for a case's ``build()`` output:
    through Pyomo's NL writer for a Pyomo model (the writer's time in IPOPT's build),
    on the CasADi problem dict otherwise."""
    kind, extra = built[0], built[-1]
    if kind == "pyomo":
        from benchmarks.models.reference import nl_problem

        t = time.perf_counter()
        nlp, args, sense = nl_problem(built[1])
        nl_s = time.perf_counter() - t
        ref = _ipopt_bounded(nlp, args, tol, max_iter, time_limit)
        ref.build += nl_s
        ref.f *= sense
    else:
        nlp, args = built[1], built[2]
        ref = _ipopt_bounded(nlp, args, tol, max_iter, time_limit, extra.get("ipopt_setup"))
    return ref, int(nlp["g"].numel())


def run_case(case: Case, devices, tol, max_iter=3000, time_limit=600.0,
             pyomo_templates: bool = True, reference=None) -> dict:
    """One row: IPOPT's reference and caspar on ``devices``.  ``reference``: a callable
    giving :func:`ipopt_reference`'s answer for the case's name (computed elsewhere,
    e.g. ahead in worker processes: benchmarks/ipopt_ahead.py), else computed here."""
    import pyomo.environ  # noqa: F401  (import time is not model time)

    t = time.perf_counter()
    built = case.build()
    model_s = time.perf_counter() - t
    kind, extra = built[0], built[-1]
    row = dict(suite=case.suite, model=case.name, size=case.size, model_s=model_s)
    ref, m = (ipopt_reference(built, tol, max_iter, time_limit) if reference is None
              else reference(case.name))
    obj, cargs = (built[1], None) if kind == "pyomo" else (built[1], built[2])
    row.update(n=int(ref.x.size), m=m, ipopt_build_s=ref.build,
               ipopt_solve_s=ref.solve, ipopt_status=ref.status, ipopt_iter=ref.iterations,
               ipopt_f=ref.f)
    for dev in ("cpu", "cuda"):
        if dev in devices:
            c = _caspar(kind, obj, cargs, dev, tol, max_iter, time_limit, pyomo_templates)
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
            row.update({f"{dev}_{short}": c.get("counts", {}).get(short, "")
                        for short, _ in COUNTS})
            if dev == "cuda":
                row["cuda_resolve_s"] = c.get("resolve", "")
                row["cuda_analysis_s"] = c.get("analysis", "")
            else:
                row["cpu_path"] = c.get("path", "")
        else:
            row.update({f"{dev}_build_s": "", f"{dev}_solve_s": "", f"{dev}_status": "",
                        f"{dev}_iter": "", f"{dev}_f": "", f"{dev}_match": "", f"{dev}_ratio": ""})
            row.update({f"{dev}_{short}_ms": "" for short, _ in PHASES})
            row.update({f"{dev}_{short}": "" for short, _ in COUNTS})
            if dev == "cpu":
                row["cpu_path"] = ""
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
