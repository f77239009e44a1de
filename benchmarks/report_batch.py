"""The "Batched solves" section of ``benchmarks/RESULTS.md``.

Rendered by :func:`benchmarks.report.render` from ``<results>/batch/<device>/results.csv``
(``benchmarks/bench_batch.py``'s columns, :data:`benchmarks.bench_batch.COLUMNS`), with
the report's own loading (:func:`benchmarks.report.load`), meta lines and table helper.
Per device folder three tables:

* batch against sequential solves (workloads ``ik``, ``vdp_colloc``): every solver's total
  seconds for all B instances, milliseconds per instance, speed-up over IPOPT called once
  per instance (IPOPT's seconds per instance x B / the row's seconds), and the agreement
  with IPOPT and with caspar's single solves: equal statuses and iteration counts as
  ``equal/compared`` and the largest relative objective difference;
* the scaling curve (``ik_scaling``): seconds per batch and per instance at each B;
* the service (``ik_service``): throughput, p50 / p99 latency and mean batch size.
"""

from __future__ import annotations

from benchmarks.report import Run, _num, meta_lines, pipe_table

SOLVERS = {"caspar_batch": "caspar solve_batch",
           "caspar_batch_again": "caspar solve_batch, second call",
           "caspar_single": "caspar single solves",
           "ipopt_seq": "IPOPT, one call each", "casadi_map": "CasADi map (threads) of IPOPT",
           "caspar_service": "caspar SolverService"}
WORKLOADS = {"ik": "IK", "vdp_colloc": "Van der Pol MPC"}


def _count(r: dict, key: str, of) -> str:
    v = r.get(key, "")
    return f"{v}/{of}" if isinstance(v, int) and not isinstance(v, bool) else "—"


def _agreement(r: dict) -> list[str]:
    """= IPOPT status, = IPOPT it, max rel df (IPOPT), then the same against single."""
    n = r.get("n_single", "")
    return [_count(r, "status_eq_ipopt", r["B"]), _count(r, "iter_eq_ipopt", r["B"]),
            _num(r.get("max_rel_df_ipopt"), ".1e"), _count(r, "status_eq_single", n),
            _count(r, "iter_eq_single", n), _num(r.get("max_rel_df_single"), ".1e")]


AGREEMENT = ["= IPOPT status", "= IPOPT it", "max rel Δf vs IPOPT", "= single status",
             "= single it", "max rel Δf vs single"]


def _device(r: dict) -> str:
    return {"cuda": "GPU", "cpu": "CPU", "auto": "auto (GPU machine)"}.get(
        r.get("device"), str(r.get("device", "")))


def _workload(r: dict, meta: dict) -> str:
    n = meta.get("vdp_N") if r["case"] == "vdp_colloc" else None
    return WORKLOADS[r["case"]] + (f" (N={n})" if n else "")


def versus(run: Run) -> list[str]:
    rows = [r for r in run.rows if r.get("case") in WORKLOADS]
    if not rows:
        return []
    return ["#### Batch against sequential solves", ""] + pipe_table(
        ["workload", "solver", "device", "B", "threads", "build s", "total s",
         "ms / instance", "speed-up vs IPOPT", "solved", *AGREEMENT, "note"],
        [[_workload(r, run.meta), SOLVERS.get(r["solver"], r["solver"]), _device(r),
          str(r["B"]), str(r.get("threads", "")) or "—", _num(r.get("build_s")),
          _num(r.get("total_s"), ".3f"), _num(r.get("per_instance_ms"), ".3f"),
          _num(r.get("speedup_vs_ipopt"), ".3g"), _count(r, "solved", r["B"]),
          *_agreement(r), str(r.get("note", ""))] for r in rows]) + [""]


def scaling(run: Run) -> list[str]:
    rows = [r for r in run.rows if r.get("case") == "ik_scaling"]
    if not rows:
        return []
    return ["#### Scaling: IK, one solve_batch call of B instances", ""] + pipe_table(
        ["device", "B", "total s", "ms / instance", "instances / s", "solved"],
        [[_device(r), str(r["B"]), _num(r.get("total_s"), ".4f"),
          _num(r.get("per_instance_ms"), ".4f"), _num(r.get("instances_per_s"), ".4g"),
          _count(r, "solved", r["B"])] for r in rows]) + [""]


def service(run: Run) -> list[str]:
    rows = [r for r in run.rows if r.get("case") == "ik_service"]
    if not rows:
        return []
    return ["#### SolverService: IK requests from client threads (closed loop)", ""] + \
        pipe_table(["device", "client threads", "requests", "total s", "solves / s",
                    "p50 latency ms", "p99 latency ms", "mean batch size", *AGREEMENT,
                    "note"],
                   [[_device(r), str(r.get("threads", "")), str(r["B"]),
                     _num(r.get("total_s"), ".3f"), _num(r.get("instances_per_s"), ".4g"),
                     _num(r.get("p50_ms"), ".3f"), _num(r.get("p99_ms"), ".3f"),
                     _num(r.get("mean_batch"), ".1f"), *_agreement(r),
                     str(r.get("note", ""))] for r in rows]) + [""]


def section(runs: list[Run]) -> list[str]:
    """The markdown lines of the section, one subsection per device folder."""
    out = ["## Batched solves", "",
           "`benchmarks/bench_batch.py`: B instances of one compiled problem (different "
           "parameters p) solved by caspar's `solve_batch`, by caspar's single solves, by "
           "IPOPT called once per instance and by CasADi's threaded map of IPOPT; "
           "agreement counts equal statuses and iterations per instance, Δf is "
           "|f - f_ref| / |f_ref| over the instances both solved.", ""]
    for run in runs:
        where = "caspar on the GPU and CPU" if run.device == "gpu" else "caspar on the CPU"
        quick = " (quick run)" if run.meta.get("quick") else ""
        out += [f"### batch: {where}{quick}", "", *meta_lines(run)]
        out += versus(run) + scaling(run) + service(run)
    return out
