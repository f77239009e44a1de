"""Setup time of a Pyomo AC-OPF: ``from_pyomo`` against Pyomo's NL writer (issue 20).

Writing the ``.nl`` file is the first step of every Pyomo + IPOPT solve, so it is the
bar for caspar's setup.  For each model and case, one process builds the model once
(not timed) and then runs ``--repeat`` interleaved rounds of

* ``nl``        ``model.write(path, format='nl', io_options={'symbolic_solver_labels':
                False})`` (Pyomo's NL writer v2);
* ``extract``   ``pyomo_to_model(model)``: the default reader (the template reader,
                :mod:`caspar_backend.adapters.pyomo.templates`);
* ``problem``   ``Problem(nlp)``: pattern groups and their derivatives;
* ``caspar``    ``extract + problem``, i.e. ``from_pyomo``: read, grouped and derived;
* with ``--reference`` also the per-instance walker (``templates=False``, the same
  problem bit for bit) in the round.

The table gives the median of each column over the rounds and the median of the
per-round ratio ``caspar / nl`` (the machine may be shared: a ratio of two timings
taken back to back is steadier than either timing), in wall seconds and in process
CPU seconds (steadier still on a loaded machine; the NL writer's file output is
buffered and small next to its CPU work).  Models:

* ``suite``  :func:`benchmarks.models.acopf.acopf_pyomo` (the benchmark suite's model);
* ``egret``  EGRET's ``create_psv_acopf_model`` (``pip install gridx-egret``; skipped
             when it is not installed), read from the same PGLib file.

    python benchmarks/bench_setup_pyomo.py [--cases pglib_opf_case2869_pegase ...]
        [--models suite egret] [--repeat 3] [--reference] [--json PATH] [--out DIR]

``--out DIR`` writes the rows as ``DIR/results.csv`` with ``DIR/meta.json`` (commit, date,
hardware, command), the layout of ``benchmarks/results/`` (the report renders
``benchmarks/results/pyomo_setup/cpu``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: benchmarks.models

DEFAULT_CASES = ("pglib_opf_case2869_pegase", "pglib_opf_case9241_pegase")


def build_suite(case):
    from benchmarks.models.acopf import acopf_pyomo

    return acopf_pyomo(case)


def build_egret(case):
    import logging

    from egret.models.acopf import create_psv_acopf_model
    from egret.parsers.matpower_parser import create_ModelData

    from benchmarks.models.matpower import pglib_path

    logging.getLogger("pyomo.core").setLevel(logging.ERROR)  # flat-start bound warnings
    model, _md = create_psv_acopf_model(create_ModelData(str(pglib_path(case))))
    return model


MODELS = {"suite": build_suite, "egret": build_egret}


def _timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _timed_cpu(fn):
    """``((wall s, process CPU s), result)``."""
    gc.collect()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return (time.perf_counter() - t, time.process_time() - c), out


def run(model_name: str, case: str, repeat: int, reference: bool) -> dict:
    """Interleaved rounds on one model; medians and the median per-round ratio."""
    from caspar_backend.adapters.pyomo import pyomo_to_model
    from caspar_backend.problem import Problem

    t_build, m = _timed(lambda: MODELS[model_name](case))
    cols = {k: [] for k in ("nl", "extract", "problem", "caspar", "ratio", "nl_cpu",
                            "caspar_cpu", "ratio_cpu")}
    if reference:
        cols.update(ref=[], ref_ratio=[])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.nl")
        for _ in range(repeat):
            (t_nl, c_nl), _ = _timed_cpu(lambda: m.write(path, format="nl", io_options={
                "symbolic_solver_labels": False}))
            (t_ex, c_ex), nlp = _timed_cpu(lambda: pyomo_to_model(m))
            (t_pr, c_pr), prob = _timed_cpu(lambda: Problem(nlp))
            cols["nl"].append(t_nl)
            cols["extract"].append(t_ex)
            cols["problem"].append(t_pr)
            cols["caspar"].append(t_ex + t_pr)
            cols["ratio"].append((t_ex + t_pr) / t_nl)
            cols["nl_cpu"].append(c_nl)
            cols["caspar_cpu"].append(c_ex + c_pr)
            cols["ratio_cpu"].append((c_ex + c_pr) / c_nl)
            if reference:
                t_ref, ref = _timed(lambda: Problem(pyomo_to_model(m, templates=False)))
                cols["ref"].append(t_ref)
                cols["ref_ratio"].append(t_ref / t_nl)
                del ref
            groups, n, mrows = len(prob.groups), prob.n, prob.m
            flat = len(nlp.constraints)
            del nlp, prob
    row = {k: statistics.median(v) for k, v in cols.items()}
    row.update(model=model_name, case=case, n=n, m=mrows, groups=groups, flat_rows=flat,
               build=t_build, repeat=repeat)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES))
    ap.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds")
    ap.add_argument("--reference", action="store_true",
                    help="also time the per-instance walker (templates=False)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--out", help="write results.csv and meta.json into this folder")
    args = ap.parse_args(argv if argv is not None else sys.argv[1:])
    import pyomo

    print(f"# Pyomo {pyomo.version.version}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs; seconds, medians of "
          f"{args.repeat} interleaved rounds")
    head = ("| model | case | n | m | groups | NL writer | extract | Problem | from_pyomo "
            "| from_pyomo / NL | CPU: NL writer | CPU: from_pyomo | CPU ratio |")
    if args.reference:
        head += " per-instance path | per-instance / NL |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    rows = []
    for case in args.cases:
        for name in args.models:
            try:
                r = run(name, case, args.repeat, args.reference)
            except ImportError as exc:
                print(f"| {name} | {case} | skipped: {exc} |")
                continue
            rows.append(r)
            line = (f"| {name} | {case} | {r['n']} | {r['m']} | {r['groups']} | "
                    f"{r['nl']:.2f} | {r['extract']:.2f} | {r['problem']:.2f} | "
                    f"{r['caspar']:.2f} | {r['ratio']:.2f} | {r['nl_cpu']:.2f} | "
                    f"{r['caspar_cpu']:.2f} | {r['ratio_cpu']:.2f} |")
            if args.reference:
                line += f" {r['ref']:.2f} | {r['ref_ratio']:.2f} |"
            print(line, flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if args.out:
        write_folder(args.out, rows, args, argv if argv is not None else sys.argv[1:])


#: results.csv's columns, in order
CSV_COLUMNS = ("nl", "extract", "problem", "caspar", "ratio", "nl_cpu", "caspar_cpu",
               "ratio_cpu", "model", "case", "n", "m", "groups", "flat_rows", "build", "repeat")


def write_folder(out: str, rows: list, args, argv) -> None:
    """``out/results.csv`` (:data:`CSV_COLUMNS`, plus ``ref``/``ref_ratio`` with
    ``--reference``) and ``out/meta.json``."""
    import pyomo

    from benchmarks.runner import commit, hardware, write_meta, write_results

    write_results(out, list(CSV_COLUMNS) + (["ref", "ref_ratio"] if args.reference else []),
                  rows)
    hw = hardware()
    write_meta(os.path.join(out, "meta.json"), commit=commit(),
               date=time.strftime("%Y-%m-%d %H:%M %Z"),
               hardware=f"{hw['cpu']}, {hw['cores']} cores (load average "
                        f"{os.getloadavg()[0]:.1f} at the end), Pyomo "
                        f"{pyomo.version.version}",
               sizes=", ".join(args.cases) + " (PGLib): " + ", ".join(
                   {"suite": "the benchmark suite's Pyomo AC-OPF",
                    "egret": "EGRET's create_psv_acopf_model"}[k] for k in args.models),
               tol=("setup only (no solve): from_pyomo(model) = extract (the template "
                    "reader, the default) + group + derive, against Pyomo's NL writer; "
                    f"medians of {args.repeat} interleaved rounds"),
               command=" ".join(["python benchmarks/bench_setup_pyomo.py", *argv]))
    print(f"wrote {out}/results.csv and meta.json")


if __name__ == "__main__":
    main()
