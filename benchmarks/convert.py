"""``benchmarks/bench_gpu_solver.py`` records as rows of the runner's CSV.

    python -m benchmarks.convert --tol 1e-6 --out benchmarks/results/ocp/gpu/results.csv \\
        RECORDS.json [RECORDS.jsonl ...] [--ipopt IPOPT.jsonl ...]

A record (one JSON object; files hold a JSON list, several lists back to back, or one
object per line) is ``{problem, size, n, m, model_s, build_s, tol, gpu: {...}, cpu:
{...}, ipopt: {...}}``; ``gpu`` and ``cpu`` hold ``status, iter, f, t, per_iter_ms``
and ``ipopt`` holds ``status, iter, f, t, setup``.  ``--ipopt`` files add IPOPT rows
measured apart: records of that form or ``{case, status, iter, f, solve, setup}`` (an
AC-OPF case).  Columns map as

    gpu -> cuda_*, cpu -> cpu_*, ipopt -> ipopt_*;  t -> *_solve_s,  setup -> ipopt_build_s,
    build_s (caspar's adapter + grouping) -> <dev>_build_s,  per_iter_ms -> <dev>_<phase>_ms,

and ``problem``/``size`` to the runner's suite, model and size text (``colloc`` N ->
``ocp vanderpol_colloc N=...``, ``ocp`` -> ``vanderpol``, ``lsq`` points -> ``bundle``).
Only records at ``--tol`` are kept; the last record of a (problem, size) wins.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from typing import Iterator

from benchmarks.cases import lsq_cameras
from benchmarks.measure import PHASES, objectives_match
from benchmarks.table import COLUMNS


def read_records(path: str) -> Iterator[dict]:
    """The JSON objects of ``path``: a list, lists back to back, or one per line."""
    text = open(path).read()
    dec = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return
        obj, i = dec.raw_decode(text, i)
        yield from (obj if isinstance(obj, list) else [obj])


def case_of(problem: str, size: str) -> tuple[str, str, str]:
    """(suite, model, size text) of a bench_gpu_solver problem and size."""
    if problem == "acopf":
        return "acopf", size, size.split("case")[-1].split("_")[0] + " buses"
    if problem == "colloc":
        return "ocp", "vanderpol_colloc", f"N={size}"
    if problem == "ocp":
        return "ocp", "vanderpol", f"N={size}"
    if problem == "lsq":
        return "lsq", "bundle", f"points={size} cameras={lsq_cameras(int(size))}"
    return problem, problem, f"N={size}"


def _ipopt_key(rec: dict) -> tuple[str, str]:
    if "case" in rec:
        return "acopf", rec["case"]
    return rec["problem"], str(rec["size"])


def _ipopt_part(rec: dict) -> dict:
    r = rec.get("ipopt", rec)
    return dict(ipopt_status=r["status"], ipopt_iter=r["iter"], ipopt_f=float(r["f"]),
                ipopt_solve_s=float(r.get("t", r.get("solve", math.nan))),
                ipopt_build_s=float(r.get("setup", math.nan)))


def row_of(rec: dict, ipopt: dict | None) -> dict:
    suite, model, size = case_of(rec["problem"], str(rec["size"]))
    row = {c: "" for c in COLUMNS}
    row.update(suite=suite, model=model, size=size, n=rec["n"], m=rec["m"],
               model_s=rec.get("model_s", ""))
    if ipopt is not None:
        row.update(ipopt)
    for src, dev in (("cpu", "cpu"), ("gpu", "cuda")):
        r = rec.get(src)
        if not r:
            continue
        f = float(r["f"])
        row.update({f"{dev}_build_s": rec.get("build_s", ""), f"{dev}_solve_s": float(r["t"]),
                    f"{dev}_status": r["status"], f"{dev}_iter": r["iter"], f"{dev}_f": f})
        ref_f = row["ipopt_f"]
        if isinstance(ref_f, float) and math.isfinite(ref_f):
            row[f"{dev}_match"] = objectives_match(f, ref_f)
            ref_t = row["ipopt_solve_s"]
            row[f"{dev}_ratio"] = float(r["t"]) / ref_t if ref_t > 0 else math.nan
        ph = r.get("per_iter_ms", {})
        row.update({f"{dev}_{short}_ms": ph.get(key, "") for short, key in PHASES})
    return row


def convert(paths: list[str], ipopt_paths: list[str], tol: float) -> list[dict]:
    ipopt: dict = {}
    for p in list(paths) + list(ipopt_paths):
        for rec in read_records(p):
            if ("ipopt" in rec or "case" in rec) and rec.get("tol", tol) == tol:
                ipopt[_ipopt_key(rec)] = _ipopt_part(rec)
    rows: dict = {}
    for p in paths:
        for rec in read_records(p):
            if rec.get("tol") == tol and ("gpu" in rec or "cpu" in rec):
                key = (rec["problem"], str(rec["size"]))
                rows[key] = row_of(rec, ipopt.get(key))
    return list(rows.values())


def write_csv(rows: list[dict], path: str) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.convert",
                                 description="bench_gpu_solver.py records -> runner CSV")
    ap.add_argument("records", nargs="+", help="bench_gpu_solver JSON / JSON-lines files")
    ap.add_argument("--ipopt", nargs="*", default=[], help="IPOPT rows measured apart")
    ap.add_argument("--tol", type=float, required=True, help="keep the records at this tol")
    ap.add_argument("--out", required=True, help="the CSV to write")
    args = ap.parse_args(argv)
    rows = convert(args.records, args.ipopt, args.tol)
    write_csv(rows, args.out)
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
