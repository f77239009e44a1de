"""Benchmark: caspar end to end on one PGLib case, as a user's process meets it.

    python benchmarks/bench_e2e.py CASE [--device cuda] [--resolves 2] [--cache-dir DIR]

The benchmark suite's CasADi AC-OPF (``benchmarks.models.acopf.acopf_casadi``) of
``CASE``; the model's construction is timed apart and is no one's setup.  Then, in this
process:

* ``build_s``: ``from_casadi`` + ``Problem.evaluator(device)`` with the problem cache
  off (``CASPAR_PROBLEM_CACHE=0``, as the runner) -- the kernel cache
  (``CASPAR_CACHE_DIR``, or ``--cache-dir``) is used: run the script twice with one
  folder for a "second process";
* ``first``: the first solve (cuDSS's analysis included on the GPU);
* ``re1`` ...: re-solves of the compiled problem (``timing_statistics`` 'yes' but for the
  last, 'no');
* ``--profile FILE``: one more re-solve ('yes') under cProfile, its functions by own time
  and by cumulative time written to FILE (where the host's Python goes in an iteration);
* ``--timeline FILE``: one more re-solve ('yes') with the device's timeline kept
  (``benchmarks/cuda_timeline.py``: needs ``CASPAR_TIMELINE`` and the counters' library
  preloaded), its per-iteration summary -- device busy time, idle gaps by length, kernels
  by total time -- written to FILE as JSON.

Per solve: seconds, status, iterations, objective, per-iteration phase times (ms), the
solve's one-time setup and cuDSS analysis (s) and,
when ``benchmarks/cuda_counters.py``'s library is preloaded, launches / device-to-host
reads / synchronizations per iteration.  Prints one JSON line prefixed ``E2E``.  IPOPT is
not run here (its build and solve of the same model are the runner's columns,
``python -m benchmarks --suite acopf --models CASE``): the end-to-end ratio of
``benchmarks/results/setup_e2e`` divides the two.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", help="PGLib case name, e.g. case19402_goc")
    ap.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    ap.add_argument("--resolves", type=int, default=2)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--cache-dir", default=None, help="CASPAR_CACHE_DIR for this run")
    ap.add_argument("--profile", default=None,
                    help="write a cProfile of one more re-solve to this file")
    ap.add_argument("--timeline", default=None,
                    help="write the device timeline summary of one more re-solve here")
    a = ap.parse_args(argv)
    os.environ["CASPAR_PROBLEM_CACHE"] = "0"
    if a.cache_dir:
        os.environ["CASPAR_CACHE_DIR"] = a.cache_dir

    import caspar_backend as cb
    from benchmarks.cases import acopf_cases
    from benchmarks.cuda_counters import counted_by, difference, snapshot
    from benchmarks.measure import per_iteration_counts, phase_ms

    cases = list(acopf_cases(10 ** 6, {a.case.removeprefix("pglib_opf_")}))
    if not cases:
        raise SystemExit(f"no PGLib case {a.case!r}")
    t = time.perf_counter()
    built = cases[0].build()
    out = dict(case=a.case, device=a.device, tol=a.tol, model_s=time.perf_counter() - t)
    nlp, args = built[1], built[2]
    t = time.perf_counter()
    problem = cb.from_casadi(nlp, **args)
    problem.evaluator(a.device)
    out["build_s"] = time.perf_counter() - t
    runs = ["first"] + [f"re{k + 1}" for k in range(a.resolves)]
    for k, name in enumerate(runs):
        timed = "no" if k == len(runs) - 1 and k > 0 else "yes"
        before = snapshot()
        t = time.perf_counter()
        r = problem.solve(tol=a.tol, print_level=0, max_iter=3000, device=a.device,
                          timing_statistics=timed)
        out[name] = dict(seconds=time.perf_counter() - t, status=r.status,
                         iterations=int(r.iterations), f=float(r.f), timing_statistics=timed,
                         phases_ms=phase_ms(r), setup_s=float(r.timings.get("setup", 0.0)),
                         analysis_s=float(r.extra.get("analysis_seconds", 0.0)),
                         counts=per_iteration_counts(difference(before, snapshot()), r))
    out["total_s"] = out["build_s"] + out["first"]["seconds"]
    if a.profile:
        out["profiled"] = profiled_solve(problem, a, a.profile)
    if a.timeline:
        out["timeline"] = timeline_solve(problem, a, a.timeline)
    out["counted_by"] = counted_by()
    print("E2E " + json.dumps(out), flush=True)
    return out


def profiled_solve(problem, a, path: str) -> dict:
    """One re-solve under cProfile; its statistics (own time, then cumulative) to ``path``."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    r = problem.solve(tol=a.tol, print_level=0, max_iter=3000, device=a.device)
    prof.disable()
    seconds = time.perf_counter() - t
    text = io.StringIO()
    text.write(f"{a.case} re-solve under cProfile: {seconds:.3f} s, {r.iterations} "
               f"iterations, {r.status}\n")
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(70)
    stats.sort_stats("cumulative").print_stats(70)
    with open(path, "w") as f:
        f.write(text.getvalue())
    return dict(seconds=seconds, iterations=int(r.iterations), status=r.status)


def timeline_solve(problem, a, path: str) -> dict:
    """One re-solve with the device timeline kept; its summary to ``path`` (JSON)."""
    from benchmarks import cuda_timeline as tl
    from benchmarks.measure import phase_ms

    if not tl.available():
        raise SystemExit("--timeline: preload the counters' library built with CUPTI and "
                         "set CASPAR_TIMELINE=<rows>")
    tl.clear()
    t0, t = tl.now(), time.perf_counter()
    r = problem.solve(tol=a.tol, print_level=0, max_iter=3000, device=a.device)
    seconds, t1 = time.perf_counter() - t, tl.now()
    rec, offered = tl.rows()
    s = dict(case=a.case, seconds=seconds, status=r.status, rows=int(rec.size),
             rows_offered=offered, phases_ms=phase_ms(r),
             whole=tl.summary(rec, t0, t1, r.iterations))
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
    return dict(seconds=seconds, iterations=int(r.iterations), status=r.status,
                busy_ms=s["whole"]["busy_ms"], wall_ms=s["whole"]["wall_ms"])


if __name__ == "__main__":
    main()
