"""The runner's outputs as data: the CSV columns (:data:`COLUMNS`) and the markdown table.

A row is a dict keyed by :data:`COLUMNS`: ``<who>_build_s``, ``_solve_s``, ``_status``,
``_iter``, ``_f`` for ``who`` in ipopt, cpu, cuda; ``<dev>_match`` (caspar's objective
against IPOPT's), ``<dev>_ratio`` (caspar solve s / IPOPT solve s), five
``<dev>_<phase>_ms`` per-iteration columns, the published-value checks and, where
``benchmarks/cuda_counters.py`` counted them, ``cuda_launches_it``, ``cuda_reads_it`` and
``cuda_syncs_it`` (CUDA API calls per iteration; shown when present), and
``cuda_resolve_s``: a second solve of the compiled problem on the GPU (cuDSS's analysis is
the first solve's); ``cuda_analysis_s``: that analysis, part of ``cuda_solve_s`` (a first
solve less it is what a later solve of the compiled problem costs).  A device that did not
run leaves its columns empty.
"""

from __future__ import annotations

import math

from benchmarks.measure import COUNTS, PHASES

COLUMNS = ["suite", "model", "size", "n", "m", "model_s",
           "ipopt_build_s", "ipopt_solve_s", "ipopt_status", "ipopt_iter", "ipopt_f",
           "cpu_build_s", "cpu_solve_s", "cpu_status", "cpu_iter", "cpu_f", "cpu_match",
           "cpu_ratio", *(f"cpu_{short}_ms" for short, _ in PHASES),
           "cuda_build_s", "cuda_solve_s", "cuda_status", "cuda_iter", "cuda_f", "cuda_match",
           "cuda_ratio", *(f"cuda_{short}_ms" for short, _ in PHASES),
           "published", "ipopt_matches_published", "cpu_matches_published",
           "cuda_matches_published", *(f"cuda_{short}" for short, _ in COUNTS),
           "cuda_resolve_s", "cpu_path", "cuda_analysis_s"]

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


def _counts(row, dev) -> str:
    vals = [row.get(f"{dev}_{short}", "") for short, _ in COUNTS]
    if not any(isinstance(v, float) for v in vals):
        return "—"
    return " / ".join(f"{v:.0f}" if isinstance(v, float) else "—" for v in vals)


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
    if "cuda" in devices and any(isinstance(r.get("cuda_analysis_s"), float) for r in rows):
        cols += [("caspar-GPU analysis s (in solve s)", "cuda_analysis_s", "")]
    if "cuda" in devices and any(isinstance(r.get("cuda_resolve_s"), float) for r in rows):
        cols += [("caspar-GPU re-solve s", "cuda_resolve_s", "")]
    if "cuda" in devices and any(isinstance(r.get("cuda_launches_it"), float) for r in rows):
        cols += [("caspar-GPU per it: launches / host reads / syncs", "cuda", "cnt")]
    cols += [("published", "published", ""), ("IPOPT = published", "ipopt_matches_published", "")]
    cols += [(f"{lab} = published", f"{dev}_matches_published", "")
             for dev, lab in (("cpu", "caspar-CPU"), ("cuda", "caspar-GPU")) if dev in devices]
    out = list(header)
    out.append("| " + " | ".join(c[0] for c in cols) + " |")
    out.append("|" + "---|" * len(cols))
    for r in rows:
        out.append("| " + " | ".join(_phases(r, k) if kind == "ph" else _counts(r, k)
                                     if kind == "cnt" else _fmt(r.get(k, ""), kind)
                                     for _, k, kind in cols) + " |")
    return "\n".join(out) + "\n"
