"""Benchmark: batched solves (``Problem.solve_batch``, ``SolverService``) against IPOPT.

    python -m benchmarks.bench_batch [--device cpu|cuda] [--ik 10000] [--vdp 1000]
        [--vdp-N 50] [--scaling 1,10,100,1000,10000,100000] [--clients 64]
        [--requests 10000] [--max-batch 1024] [--max-wait 0.002] [--workers K]
        [--map-threads CORES]
        [--single-max 2000] [--tol 1e-8] [--no-map] [--quick] [--out DIR]

Workloads (:mod:`benchmarks.batch_measure` measures them):

* ``ik`` -- the three-link planar arm IK of ``benchmarks/bench_small.py`` for ``--ik``
  random reachable targets (p = the target): caspar's ``solve_batch`` (on the CPU, and
  on the GPU with ``--device cuda``) against IPOPT called once per target, against
  CasADi's ``map(B, 'thread', --map-threads)`` of the same IPOPT nlpsol, and against
  caspar's own single solves; ``solve_batch`` is called twice (rows ``caspar_batch`` and
  ``caspar_batch_again``): the first call of a process also loads the kernel onto the GPU
  and grows the memory pool, which a loop calling it again (an MPC controller) pays once;
* ``vdp_colloc`` -- the Van der Pol direct-collocation OCP with N = ``--vdp-N`` and the
  initial state as p (``vanderpol_collocation(N, initial_state_param=True)``),
  ``--vdp`` initial states in [-0.2, 0.6] x [-0.8, 1.2]: the same comparisons;
* ``ik_scaling`` -- ``solve_batch`` on B = each of ``--scaling`` IK targets: seconds per
  batch and per instance;
* ``ik_service`` -- ``--clients`` threads sending ``--requests`` IK targets one at a time
  to one ``SolverService(max_batch_size=--max-batch, max_wait=--max-wait,
  workers=--workers)`` (default: the service's, one worker) per device, and with
  ``--device cuda`` once more with ``device='auto'`` (small batches on the CPU kernel):
  throughput and p50 / p99 latency; with ``--service-python-cpus 0`` once more on the
  CPU in a child process whose Python threads share core 0 and whose kernel runs on the
  other cores (``caspar_backend.split_cores``).

Every instance starts from the model's x0 with the same options (IPOPT's ``tol``,
print_level 0).  Agreement is recorded per row against IPOPT called once per instance
(``*_ipopt``) and against caspar's single solves on the row's device (``*_single``, the
first ``--single-max`` instances): how many statuses and iteration counts are equal and
the largest relative objective difference over instances both solved
(:func:`benchmarks.batch_measure.compare`).

Output (``--out``, default ``benchmarks/results/batch/<cpu|gpu>/``; with ``--quick``
``benchmarks/out/batch/<cpu|gpu>/``, git-ignored): ``results.csv`` (:data:`COLUMNS`,
one row per measurement) and ``meta.json``; ``python -m benchmarks report`` renders them
as the "Batched solves" section of ``benchmarks/RESULTS.md``.  ``--quick`` is a small run
for a laptop (B up to 10^3, 8 clients).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import sys
import time

import numpy as np

if __package__ in (None, ""):      # run as a file: the checkout root on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import batch_measure as bm  # noqa: E402

COLUMNS = ["case", "solver", "device", "B", "threads", "build_s", "total_s",
           "per_instance_ms", "instances_per_s", "speedup_vs_ipopt", "solved",
           "status_eq_ipopt", "iter_eq_ipopt", "max_rel_df_ipopt", "n_single",
           "status_eq_single", "iter_eq_single", "max_rel_df_single", "p50_ms", "p99_ms",
           "mean_batch", "note"]

#: --quick's sizes (the rest as given)
QUICK = dict(ik=300, vdp=30, scaling="1,10,100,1000", clients=8, requests=300,
             map_threads=2, single_max=300)
X0_IK = [0.1, 0.2, 0.3]


def ik_workload(B: int, seed: int = 0) -> bm.Workload:
    from benchmarks.bench_small import ik_problem, ik_targets

    nlp, bounds = ik_problem()
    return bm.Workload("ik", nlp, dict(x0=X0_IK, **bounds), ik_targets(B, seed))


def vdp_workload(B: int, N: int = 50, seed: int = 0) -> bm.Workload:
    """B Van der Pol MPC steps: initial states uniform in [-0.2, 0.6] x [-0.8, 1.2], a box
    where every start is feasible (IPOPT solves all of a 60-state sample)."""
    from caspar_backend.adapters.casadi.models import vanderpol_collocation

    nlp, args = vanderpol_collocation(N, initial_state_param=True)
    args.pop("p")
    rng = np.random.default_rng(seed)
    states = np.stack([rng.uniform(-0.2, 0.6, B), rng.uniform(-0.8, 1.2, B)], axis=1)
    return bm.Workload("vdp_colloc", nlp, args, states)


def row(case: str, solver: str, device: str, out: bm.Outcome, ipopt: bm.Outcome | None = None,
        single: bm.Outcome | None = None) -> dict:
    """A CSV row (:data:`COLUMNS`) of ``out``, compared with the references given."""
    B = len(out.status)
    r = {c: "" for c in COLUMNS}
    r.update(case=case, solver=solver, device=device, B=B, build_s=out.build_s,
             total_s=out.total_s, per_instance_ms=1e3 * out.total_s / B,
             instances_per_s=B / out.total_s if out.total_s > 0 else float("nan"),
             solved=out.solved if "" not in out.status else "")
    r.update({k: v for k, v in out.extra.items() if k in COLUMNS})
    if ipopt is not None:
        c = bm.compare(out, ipopt.head(B))
        r.update(status_eq_ipopt=_blank(c["status"]), iter_eq_ipopt=_blank(c["iter"]),
                 max_rel_df_ipopt=c["df"],
                 speedup_vs_ipopt=ipopt.total_s * B / (len(ipopt.status) * out.total_s)
                 if out.total_s > 0 else float("nan"))
    if single is not None:
        k = min(B, len(single.status))
        c = bm.compare(out.head(k), single.head(k))
        r.update(n_single=k, status_eq_single=_blank(c["status"]),
                 iter_eq_single=_blank(c["iter"]), max_rel_df_single=c["df"])
    return r


def _blank(v):
    return "" if v is None else v


def _say(r: dict, err) -> None:
    def g(k, fmt):
        v = r.get(k, "")
        return format(v, fmt) if isinstance(v, (int, float)) and math.isfinite(v) else "-"

    print(f"  {r['case']:11s} {r['solver']:14s} {r['device']:4s} B={r['B']:<6d} "
          f"total {g('total_s', '.3f')} s  {g('per_instance_ms', '.3f')} ms/inst  "
          f"x{g('speedup_vs_ipopt', '.2f')} vs IPOPT  solved {r['solved']}  "
          f"=IPOPT st/it {r['status_eq_ipopt']}/{r['iter_eq_ipopt']} "
          f"df {g('max_rel_df_ipopt', '.1e')}  =single st/it {r['status_eq_single']}/"
          f"{r['iter_eq_single']} of {r['n_single']} df {g('max_rel_df_single', '.1e')}"
          + (f"  p50 {g('p50_ms', '.2f')} p99 {g('p99_ms', '.2f')} ms batch "
             f"{g('mean_batch', '.1f')}" if r["p50_ms"] != "" else "")
          + (f"  [{r['note']}]" if r["note"] else ""), file=err, flush=True)


def compare_workload(work: bm.Workload, devices, a, err) -> list:
    """IPOPT sequential, CasADi map, and per device caspar batch and single on ``work``."""
    rows = []
    ipopt = bm.ipopt_sequential(work, a.tol)
    rows.append(dict(row(work.name, "ipopt_seq", "cpu", ipopt), speedup_vs_ipopt=1.0))
    if not a.no_map:
        out = bm.casadi_map(work, a.tol, a.map_threads)
        rows.append(row(work.name, "casadi_map", "cpu", out, ipopt))
    for dev in devices:
        P, build = bm.compile_caspar(work, dev)
        single = bm.caspar_single(P, work.head(a.single_max or work.size), dev, a.tol, build)
        batch = bm.caspar_batch(P, work, dev, a.tol, build)
        rows.append(row(work.name, "caspar_batch", dev, batch, ipopt, single))
        # the same call again, as a loop (an MPC controller) makes it: the first one paid
        # what a process pays once -- the kernel's module loaded onto the GPU, the memory
        # pool grown to the batch's workspaces
        again = bm.caspar_batch(P, work, dev, a.tol, build)
        rows.append(row(work.name, "caspar_batch_again", dev, again, ipopt, single))
        rows.append(row(work.name, "caspar_single", dev, single, ipopt))
    for r in rows:
        _say(r, err)
    return rows


def run(a, err=None) -> list:
    """Every measurement of the module doc; the rows, also written under ``a.out``."""
    from benchmarks.runner import commit, gpu_devices, hardware, write_meta

    err = sys.stderr if err is None else err
    devices, gpu_note = gpu_devices(a.device)
    rows = []
    kernel_s = _cuda_kernel_seconds() if "cuda" in devices else None
    print(f"ik: {a.ik} targets; vdp_colloc: {a.vdp} states, N={a.vdp_N}", file=err)
    rows += compare_workload(ik_workload(a.ik), devices, a, err)
    rows += compare_workload(vdp_workload(a.vdp, a.vdp_N), devices, a, err)
    sizes = [int(float(s)) for s in str(a.scaling).split(",") if s.strip()]
    if a.requests:
        service_work = ik_workload(a.requests, seed=2)
        service_ipopt = bm.ipopt_sequential(service_work, a.tol)
    for dev in devices:
        P, build = bm.compile_caspar(ik_workload(2), dev)
        for B in sizes:
            r = row("ik_scaling", "caspar_batch", dev,
                    bm.caspar_batch(P, ik_workload(B, seed=1), dev, a.tol, build))
            _say(r, err)
            rows.append(r)
        if a.requests:
            work = service_work
            single = bm.caspar_single(P, work.head(a.single_max or work.size), dev, a.tol)
            out = bm.caspar_service(P, work, dev, a.tol, a.clients, a.max_batch, a.max_wait,
                                    a.workers)
            r = row("ik_service", "caspar_service", dev, out, service_ipopt, single)
            _say(r, err)
            rows.append(r)
            if dev == "cpu" and a.service_python_cpus:
                out = bm.caspar_service_split(
                    ("benchmarks.bench_batch", "ik_workload", (a.requests, 2)), a.tol,
                    a.clients, a.max_batch, a.max_wait, a.service_python_cpus, a.workers)
                r = row("ik_service", "caspar_service", dev, out, service_ipopt, single)
                _say(r, err)
                rows.append(r)
            if dev == "cuda":
                # the same service with device='auto': its batches below
                # AUTO_GPU_MIN_PER_CORE instances per core on the CPU kernel
                out = bm.caspar_service(P, work, "auto", a.tol, a.clients, a.max_batch,
                                        a.max_wait, a.workers)
                r = row("ik_service", "caspar_service", "auto", out, service_ipopt, single)
                _say(r, err)
                rows.append(r)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    import casadi

    hw = hardware()
    write_meta(os.path.join(a.out, "meta.json"), commit=commit(),
               date=time.strftime("%Y-%m-%d %H:%M %Z"),
               hardware=f"{hw['cpu']}, {hw['cores']} cores" + (
                   f"; GPU: {hw['gpu']}" if "cuda" in devices else f" ({gpu_note})"),
               tol=a.tol, command=" ".join(["python -m benchmarks.bench_batch", *a.argv]),
               reference=f"IPOPT (casadi {casadi.__version__} wheel, MUMPS)",
               quick=bool(a.quick), vdp_N=a.vdp_N, cuda_kernel_compile_s=kernel_s)
    print(f"wrote {a.out}/results.csv ({len(rows)} rows) and meta.json", file=err)
    return rows


def _cuda_kernel_seconds() -> float:
    """Get the CUDA batch kernel ready before anything is timed (what ``caspar warmup``
    does once per machine: a compile of minutes, or a load from the disk cache), so that
    every GPU row measures the kernel, not the lockstep path standing in while it
    compiles; the seconds it took go to meta.json."""
    from caspar_backend.compiled.__main__ import compile_cuda_kernel

    s = compile_cuda_kernel()
    print(f"CUDA batch kernel ready in {s:.1f} s (compile or disk cache)", file=sys.stderr)
    return round(s, 2)


def parse(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.bench_batch",
                                 description="batched solves against IPOPT")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="cuda: caspar on the GPU as well as the CPU")
    ap.add_argument("--ik", type=int, default=10000, help="IK targets")
    ap.add_argument("--vdp", type=int, default=1000, help="Van der Pol initial states")
    ap.add_argument("--vdp-N", type=int, default=50, help="collocation intervals")
    ap.add_argument("--scaling", default="1,10,100,1000,10000,100000",
                    help="IK batch sizes of the scaling curve, comma-separated")
    ap.add_argument("--clients", type=int, default=64, help="service client threads")
    ap.add_argument("--requests", type=int, default=10000,
                    help="IK requests sent to the service (0: no service run)")
    ap.add_argument("--max-batch", type=int, default=1024, help="service max_batch_size")
    ap.add_argument("--max-wait", type=float, default=0.002, help="service max_wait (s)")
    ap.add_argument("--service-python-cpus", default="",
                    help="also the CPU service with its Python on these cores, e.g. 0 "
                         "(split_cores, in a child process)")
    ap.add_argument("--workers", type=int, default=None,
                    help="service workers (default: the service's default for the device)")
    ap.add_argument("--map-threads", type=int, default=os.cpu_count() or 1,
                    help="threads of CasADi's map")
    ap.add_argument("--single-max", type=int, default=2000,
                    help="caspar single solves per workload (0: all)")
    ap.add_argument("--tol", type=float, default=1e-8, help="IPOPT's tol, every solver")
    ap.add_argument("--no-map", action="store_true", help="skip CasADi's map")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes: " + ", ".join(f"{k}={v}" for k, v in QUICK.items()))
    ap.add_argument("--out", default=None, help="output folder")
    argv = sys.argv[1:] if argv is None else list(argv)
    a = ap.parse_args(argv)
    a.argv = argv
    if a.quick:
        given = {s.split("=")[0].lstrip("-").replace("-", "_") for s in argv}
        for k, v in QUICK.items():
            if k not in given:
                setattr(a, k, v)
    if a.out is None:
        here = os.path.dirname(os.path.abspath(__file__))
        a.out = os.path.join(here, "out" if a.quick else "results", "batch",
                             "gpu" if a.device == "cuda" else "cpu")
    return a


def main(argv=None) -> int:
    from caspar_backend.errors import CasparError

    try:
        run(parse(argv))
    except CasparError as e:
        print(f"caspar: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
