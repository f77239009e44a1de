"""``benchmarks/RESULTS.md`` from the CSVs under ``benchmarks/results/``.

    python -m benchmarks report [--results benchmarks/results] [--out benchmarks/RESULTS.md]
    (also python -m benchmarks.report ...)

It reads every ``<results>/<suite>/<device>/results.csv`` (the runner's columns,
:data:`benchmarks.table.COLUMNS`) with its ``meta.json`` (commit, date, hardware, tol,
command; ``benchmarks/results/README.md``) and writes

* a header: what the file is and the command that regenerates it;
* per suite (``acopf``, ``cops``, ``ocp``, ``lsq``, then any other folder), one table
  per device folder: caspar on that device against IPOPT -- status, iterations,
  objective match, build and solve seconds and the ratio r = caspar solve s / IPOPT
  solve s -- under a line with the folder's commit, date, hardware and tolerance, and a
  summary line (cases solved, mismatches, geometric mean of r);
* ``batch`` (``benchmarks/bench_batch.py``'s CSV, its own columns): the "Batched solves"
  section of :mod:`benchmarks.report_batch`, after the runner's suites;
* per suite, ``<results>/profile_<suite>.png``: the Dolan-More performance profile of
  the solve times (:func:`benchmarks.plot.performance_profile`), one panel per device
  folder (caspar and IPOPT ran on the same host there), linked from the file; skipped
  with a note when matplotlib is missing.

A case counts as solved by a solver when its status is ``Solve_Succeeded`` or
``Solved_To_Acceptable_Level`` and, for caspar, its objective does not disagree with the
reference: IPOPT's where IPOPT solved the case, else the published optimum (PGLib's
BASELINE, the COPS report) where there is one -- the published optimum also where IPOPT
ended at a local optimum that misses it and caspar's objective meets it.  Tables longer
than ``MAX_ROWS`` are cut with a note (the CSV has them all).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
from dataclasses import dataclass, field

from benchmarks.cases import SUITES

COMMAND = "python -m benchmarks report"
DEVICES = {"cpu": ("cpu", "caspar CPU"), "gpu": ("cuda", "caspar GPU")}
SOLVED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")
SHORT = {"Solve_Succeeded": "ok", "Solved_To_Acceptable_Level": "acceptable",
         "Maximum_WallTime_Exceeded": "time limit", "Maximum_Iterations_Exceeded": "iter limit"}
MAX_ROWS = 60
#: the folder of ``benchmarks/bench_batch.py``'s results (its own columns)
BATCH_SUITE = "batch"


@dataclass
class Run:
    """One ``<suite>/<device>/`` folder: its rows and meta."""
    suite: str
    device: str                       # the folder name: 'cpu' or 'gpu'
    rows: list[dict]
    meta: dict = field(default_factory=dict)

    @property
    def prefix(self) -> str:
        """The CSV's column prefix of caspar on this device ('cpu' or 'cuda')."""
        return DEVICES.get(self.device, (self.device, ""))[0]

    @property
    def label(self) -> str:
        return DEVICES.get(self.device, ("", f"caspar {self.device}"))[1]


def _value(v: str):
    """A CSV cell as bool, int, float or text ('' stays '')."""
    if v in ("True", "False"):
        return v == "True"
    for kind in (int, float):
        try:
            return kind(v)
        except ValueError:
            pass
    return v


def load(results: str) -> list[Run]:
    """Every ``<suite>/<device>/results.csv`` under ``results``, suites in report order."""
    runs = []
    if not os.path.isdir(results):
        return runs
    suites = sorted(os.listdir(results), key=lambda s: (SUITES + (s,)).index(s))
    for suite in suites:
        sdir = os.path.join(results, suite)
        if suite == "raw" or not os.path.isdir(sdir):
            continue
        for dev in sorted(os.listdir(sdir)):
            path = os.path.join(sdir, dev, "results.csv")
            if not os.path.isfile(path):
                continue
            with open(path, newline="") as f:
                rows = [{k: _value(v) for k, v in r.items()} for r in csv.DictReader(f)]
            meta_path = os.path.join(sdir, dev, "meta.json")
            meta = json.load(open(meta_path)) if os.path.isfile(meta_path) else {}
            runs.append(Run(suite, dev, rows, meta))
    return runs


def _num(v, fmt: str = ".2f") -> str:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "—"
    return format(v, fmt)


def published_instead(row: dict, who: str) -> bool:
    """Whether the reference of ``who``'s objective is the published optimum although
    IPOPT solved the case: IPOPT's objective misses the published optimum (a local one)
    and ``who``'s meets it."""
    return (row.get("ipopt_status") in SOLVED and row.get(f"{who}_match") is False
            and row.get("ipopt_matches_published") is False
            and row.get(f"{who}_matches_published") is True)


def reference_match(row: dict, who: str):
    """Whether caspar's objective on ``who`` ('cpu', 'cuda') agrees with the reference:
    IPOPT's where IPOPT solved the case (unless :func:`published_instead`), else the
    published optimum where the suite has one; None without a reference."""
    if row.get("ipopt_status") in SOLVED and not published_instead(row, who):
        return row.get(f"{who}_match")
    v = row.get(f"{who}_matches_published")
    return v if isinstance(v, bool) else None


def solved(row: dict, who: str) -> bool:
    """``who`` ('ipopt', 'cpu', 'cuda') solved the row's case (module docstring)."""
    ok = row.get(f"{who}_status") in SOLVED
    return ok and (who == "ipopt" or reference_match(row, who) is not False)


def _match(row: dict, who: str) -> str:
    v = reference_match(row, who)
    word = "yes" if v is True else ("**NO**" if v is False else "—")
    if published_instead(row, who):
        word += " (published; IPOPT's is a local optimum)"
    elif v is not None and row.get("ipopt_status") not in SOLVED:
        word += " (published)"
    return word


def meta_lines(run: Run) -> list[str]:
    """The lines under a device folder's heading: commit, date, hardware, tolerance, the
    GPU's initialisation where the runner made one (``device_init``) and the command
    that produced its CSV (``meta.json``)."""
    m = run.meta
    init = [f"- GPU initialised before the first case: {m['device_init']}"] \
        if m.get("device_init") else []
    return [f"- commit {m.get('commit', '?')}, {m.get('date', '?')}; "
            f"{m.get('hardware', 'hardware not recorded')}; tol {m.get('tol', '?')}",
            *init, f"- command: `{m.get('command', '?')}`", ""]


def pipe_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table: the header row, the rule, one line per row of cells."""
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(cells) + " |" for cells in rows])


def table(run: Run) -> list[str]:
    """The markdown lines of one device folder's table."""
    d = run.prefix
    out = [f"### {run.suite}: {run.label} vs IPOPT", "", *meta_lines(run)]
    rows = [r for r in run.rows if r.get(f"{d}_status", "") != ""]
    # the GPU's per-iteration figures: evaluation and "other" (Python driving launches)
    # ms per iteration, and kernel launches and host reads per iteration where they were
    # counted (benchmarks/cuda_counters.py)
    gpu = d == "cuda"
    counted = gpu and any(r.get("cuda_launches_it", "") != "" for r in rows)
    # a compiled problem's second GPU solve (cuDSS's analysis is the first one's)
    resolved = gpu and any(r.get("cuda_resolve_s", "") != "" for r in rows)
    # cuDSS's one-time analysis, inside the first solve's time (runs before the column
    # have none)
    analysed = gpu and any(r.get("cuda_analysis_s", "") != "" for r in rows)
    # which CPU path solved (the compiled interior point below its size limit, or the
    # general one: compiled/dispatch.py); runs before the column have none
    paths = not gpu and any(r.get("cpu_path", "") != "" for r in rows)
    extra_head = ((["eval / other ms/it"] if gpu else [])
                  + (["launches / reads per it"] if counted else [])
                  + (["analysis s"] if analysed else [])
                  + (["re-solve s"] if resolved else []) + (["path"] if paths else []))

    def extra(r):
        cells = [f"{_num(r.get('cuda_eval_ms'))} / {_num(r.get('cuda_other_ms'))}"] if gpu else []
        counts = f"{_num(r.get('cuda_launches_it'), '.0f')} / {_num(r.get('cuda_reads_it'), '.1f')}"
        return (cells + ([counts] if counted else [])
                + ([_num(r.get("cuda_analysis_s"), ".3f")] if analysed else [])
                + ([_num(r.get("cuda_resolve_s"), ".3f")] if resolved else [])
                + ([str(r.get("cpu_path", "")) or "—"] if paths else []))

    out += pipe_table(
        ["model", "size", "n", "m", "IPOPT status", "IPOPT it", f"{run.label} status",
         f"{run.label} it", "objective match", "IPOPT build s", f"{run.label} build s",
         "IPOPT solve s", f"{run.label} solve s", "ratio", *extra_head],
        [[str(r.get("model", "")), str(r.get("size", "")), str(r.get("n", "")),
          str(r.get("m", "")),
          SHORT.get(r.get("ipopt_status"), r.get("ipopt_status") or "—"),
          str(r.get("ipopt_iter", "") if r.get("ipopt_iter", "") != "" else "—"),
          SHORT.get(r.get(f"{d}_status"), r.get(f"{d}_status")),
          str(r.get(f"{d}_iter", "")), _match(r, d),
          _num(r.get("ipopt_build_s")), _num(r.get(f"{d}_build_s")),
          _num(r.get("ipopt_solve_s"), ".3f"), _num(r.get(f"{d}_solve_s"), ".3f"),
          _num(r.get(f"{d}_ratio"), ".3g"), *extra(r)] for r in rows[:MAX_ROWS]])
    if len(rows) > MAX_ROWS:
        out.append(f"\n{len(rows) - MAX_ROWS} more rows in `{run.suite}/{run.device}/results.csv`.")
    out += ["", summary(run, rows), ""]
    return out


def summary(run: Run, rows: list[dict]) -> str:
    """Cases solved by each solver, objective mismatches, geometric mean of the ratio."""
    d = run.prefix
    ratios = [r[f"{d}_ratio"] for r in rows if solved(r, d) and solved(r, "ipopt")
              and isinstance(r.get(f"{d}_ratio"), float) and r[f"{d}_ratio"] > 0]
    bad = [str(r["model"]) for r in rows if reference_match(r, d) is False]
    geo = (f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3g} over {len(ratios)} "
           "cases both solved" if ratios else "—")
    return (f"Solved: {run.label} {sum(solved(r, d) for r in rows)}/{len(rows)}, IPOPT "
            f"{sum(solved(r, 'ipopt') for r in rows)}/{len(rows)}; objective mismatches: "
            f"{', '.join(bad) if bad else 'none'}; geometric mean ratio: {geo}.")


def profile(suite: str, runs: list[Run], results: str) -> str:
    """Draw ``profile_<suite>.png`` (one panel per device folder); a markdown line."""
    from benchmarks.plot import NO_MATPLOTLIB, performance_profile

    panels = []
    for run in runs:
        d = run.prefix
        times = {who: [r[f"{who}_solve_s"] if solved(r, who) and
                       isinstance(r.get(f"{who}_solve_s"), float) else math.inf
                       for r in run.rows] for who in ("ipopt", d)}
        panels.append((f"{suite}, {run.device} host (commit {run.meta.get('commit', '?')}, "
                       f"tol {run.meta.get('tol', '?')})", times))
    name = f"profile_{suite}.png"
    note = performance_profile(panels, os.path.join(results, name))
    if note == NO_MATPLOTLIB or not note.startswith("profile:"):
        return f"({note})"
    return f"Performance profile (Dolan-Moré, solve time): ![{suite}](results/{name})"


def render(results: str) -> str:
    runs = load(results)
    lines = ["# caspar benchmark results", "",
             f"Generated by `{COMMAND}` from the CSVs under `benchmarks/results/<suite>/"
             "<device>/` (layout: `benchmarks/results/README.md`); do not edit by hand.",
             "It holds only the current measurements; earlier ones are in git history and "
             "`benchmarks/results/raw/`.", "",
             "caspar's objective matches IPOPT's when |f - f_IPOPT| <= 1e-6 max(1, |f_IPOPT|); "
             "ratio = caspar solve s / IPOPT solve s (below 1: caspar faster); build = "
             "NL write / nlpsol setup for IPOPT, adapter + code generation for caspar.", ""]
    if not runs:
        lines.append("No results yet.")
    suites = list(dict.fromkeys(r.suite for r in runs))
    for suite in suites:
        mine = [r for r in runs if r.suite == suite]
        if suite in MEASUREMENT_COLUMNS:   # a benchmark script's own rows (not the runner's)
            lines += measurement_section(mine, results)
            continue
        if suite == BATCH_SUITE:     # benchmarks/bench_batch.py's rows, not the runner's
            from benchmarks.report_batch import section

            lines += section(mine)
            continue
        lines += [f"## {suite}", "", profile(suite, mine, results), ""]
        for run in mine:
            lines += table(run)
    return "\n".join(lines).rstrip() + "\n"


#: result folders written by a benchmark script with rows of its own (not the runner's
#: COLUMNS): the columns shown, in order -- {suite: [(header, key, format)]}
MEASUREMENT_COLUMNS = {
    "lsq_ceres": [("repeat", "repeat", "d"), ("observations", "n_obs", "d"),
                  ("Ceres s", "ceres_seconds", ".3f"), ("Ceres it", "ceres_iterations", "d"),
                  ("caspar s", "caspar_seconds", ".3f"), ("caspar solve s", "caspar_solve", ".3f"),
                  ("caspar it", "caspar_iterations", "d"),
                  ("Ceres final cost", "ceres_final_cost", ".10g"),
                  ("caspar final cost", "caspar_final_cost", ".10g"),
                  ("mean error px", "caspar_mean_error", ".6f"),
                  ("caspar / Ceres", "ratio", ".3f")],
    "small": [("solver", "solver", "s"), ("problems / targets", "targets", "d"),
              ("median ms", "median_ms", ".3f"), ("p99 ms", "p99_ms", ".3f"),
              ("iterations", "iterations", "d"), ("us / iteration", "us_per_iter", ".1f"),
              ("/ IPOPT (median)", "ratio", ".3f"), ("same iterations", "same_iterations", "d"),
              ("max |f - f_IPOPT|", "max_df", ".1e"), ("path", "path", "s")],
    "small_cold": [("solver", "solver", "s"), ("targets per process", "k", "d"),
                   ("imports s", "imports_s", ".2f"), ("build s", "build_s", ".3f"),
                   ("solves s", "solves_s", ".3f"), ("total s", "total_s", ".2f"),
                   ("slowest solve ms", "worst_solve_ms", ".1f"),
                   ("total / IPOPT", "ratio", ".2f"), ("max |f - f_IPOPT|", "max_df", ".1e")],
    "sx_setup": [("case", "case", "s"), ("reader", "reader", "s"),
                 ("instructions", "instructions", "d"), ("groups", "groups", "d"),
                 ("bulk taken", "taken", "s"), ("problem cache", "cache", "s"),
                 ("read s", "read", ".2f"), ("Problem s", "problem", ".2f"),
                 ("GPU compile s", "compile", ".2f"),
                 ("total s", "total", ".2f"), ("total CPU s", "total_cpu", ".2f"),
                 ("peak RSS MB", "rss_mb", ".0f")],
    "sum_setup": [("N", "N", "d"), ("setup s", "setup", ".2f"),
                  ("setup CPU s", "setup_cpu", ".2f"), ("read s", "read", ".2f"),
                  ("group s", "group", ".3f"), ("derive s", "derive", ".3f"),
                  ("codegen s", "codegen", ".3f"), ("peak RSS MB", "rss_mb", ".0f"),
                  ("groups", "groups", "d"), ("problem cache", "problem_cache", "s")],
    "setup_e2e": [("case", "case", "s"), ("caspar run", "run", "s"),
                  ("caspar build s", "caspar_build", ".2f"),
                  ("caspar solve s", "caspar_solve", ".2f"),
                  ("caspar total s", "caspar_total", ".2f"), ("caspar it", "caspar_it", "d"),
                  ("IPOPT build s", "ipopt_build", ".2f"), ("IPOPT solve s", "ipopt_solve", "s"),
                  ("IPOPT total s", "ipopt_total", "s"), ("IPOPT it", "ipopt_it", "s"),
                  ("IPOPT / caspar (total)", "speedup", "s"),
                  ("objective match", "match", "s")],
    "estimation": [("shooting", "shooting", "s"), ("N", "N", "d"), ("solver", "solver", "s"),
                   ("construct s", "construct", ".2f"), ("solve s", "solve", ".2f"),
                   ("total s", "total", ".2f"), ("iterations", "iterations", "d"),
                   ("status", "status", "s"), ("f", "f", ".2e"),
                   ("param error", "param_error", ".1e"), ("total / IPOPT", "ratio", ".2f")],
    "pyomo_setup": [("model", "model", "s"), ("case", "case", "s"), ("n", "n", "d"),
                    ("m", "m", "d"), ("groups", "groups", "d"), ("NL writer s", "nl", ".2f"),
                    ("from_pyomo s", "caspar", ".2f"), ("from_pyomo / NL", "ratio", ".2f"),
                    ("CPU ratio", "ratio_cpu", ".2f"),
                    ("walker s", "ref", ".2f"), ("walker / NL", "ref_ratio", ".2f")],
}
#: bench_setup_sx.py --model suite: the benchmark suite's AC-OPF, the same columns
MEASUREMENT_COLUMNS["suite_setup"] = MEASUREMENT_COLUMNS["sx_setup"]


def measurement_section(runs, results: str | None = None) -> list[str]:
    """The markdown of a benchmark script's result folder (:data:`MEASUREMENT_COLUMNS`);
    for ``lsq_ceres`` also the time-vs-observations plot (:func:`bundle_plot`)."""
    out = []
    for run in runs:
        cols = MEASUREMENT_COLUMNS[run.suite]
        out += [f"## {run.suite} ({run.device})", "", *meta_lines(run)]
        out += pipe_table([h for h, _, _ in cols],
                          [[("—" if r.get(k, "") == "" else format(r[k], fmt)
                             if fmt != "s" else str(r[k])) for _, k, fmt in cols]
                           for r in run.rows])
        out.append("")
    if results is not None and runs and runs[0].suite == "lsq_ceres":
        out += [bundle_plot(runs, results), ""]
    return out


def bundle_plot(runs, results: str) -> str:
    """``lsq_ceres.png``: end-to-end time against observations, per folder Ceres and
    caspar (the median over each size's warm repeats, repeat 0 left out when a size has
    others); a markdown line."""
    import statistics

    from benchmarks.plot import NO_MATPLOTLIB, time_vs_size

    series = {}
    for run in runs:
        by_size = {}
        for r in run.rows:
            by_size.setdefault(r["n_obs"], []).append(r)
        for who, key in (("Ceres", "ceres_seconds"), ("caspar", "caspar_seconds")):
            pts = []
            for n, rows in by_size.items():
                warm = [r for r in rows if r["repeat"] != 0] or rows
                pts.append((n, statistics.median(r[key] for r in warm)))
            series[f"{who} ({run.device} host)" if who == "Ceres"
                   else f"caspar {run.device}"] = pts
    name = "lsq_ceres.png"
    note = time_vs_size(series, os.path.join(results, name), "observations",
                        "bundle adjustment: end to end, warm (median)")
    if note == NO_MATPLOTLIB or not note.startswith("plot:"):
        return f"({note})"
    return f"Time against observations: ![lsq_ceres](results/{name})"


def main(argv=None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(prog=COMMAND, description="write RESULTS.md from the CSVs")
    ap.add_argument("--results", default=os.path.join(here, "results"),
                    help="the results folder (default benchmarks/results)")
    ap.add_argument("--out", default=os.path.join(here, "RESULTS.md"),
                    help="the markdown file to write (default benchmarks/RESULTS.md)")
    args = ap.parse_args(argv)
    text = render(args.results)
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
