"""Benchmark (issue 22): the three-link arm IK batch solved by the CUDA kernel (one thread
per instance, ``caspar_backend.compiled.cuda``; ``solve_batch(device='cuda')``) against
sequential IPOPT on the same machine's CPU.

    python benchmarks/bench_ik_kernel.py [--targets 10000] [--sizes 1,10,100,1000,10000,100000]
        [--repeats 3] [--check 200] [--ipopt-procs 8] [--out DIR] [--commit HASH]

Measured, in one process (the kernel compiles once per process unless numba-cuda's disk
cache holds it):

* cold: the first ``solve_batch`` of ``--targets`` reachable targets (seed 2), including
  the kernel's compilation, the layout and CuPy's start;
* warm: the same call again (median of ``--repeats``), and the scaling over ``--sizes``
  (targets seed 3; median of ``--repeats``, one run from 10^5 on);
* agreement: the first ``--check`` instances of the warm batch against their own CPU
  ``Problem.solve`` (status, iterations, max relative |df|), and every instance's f
  against IPOPT's;
* IPOPT: ``casadi.nlpsol('ipopt')`` (print_level 0), built once per process, called for
  every target one after the other; the targets are split over ``--ipopt-procs``
  processes only to save wall time: the figure is the sum of the processes' sequential
  loop times (each process times its own loop), i.e. one core's sequential total.

Both solvers: tol 1e-8 (IPOPT's default, caspar's default), x0 = (0.1, 0.2, 0.3).
``--out``: results.csv (one row per measurement), meta.json, log.txt.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from collections import Counter

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

X0 = [0.1, 0.2, 0.3]
COLUMNS = ("case", "solver", "device", "B", "phase", "total_s", "per_instance_us",
           "instances_per_s", "speedup_vs_ipopt", "n_kernel", "n_single", "max_iterations",
           "statuses", "note")


def _ipopt_chunk(targets):
    import casadi as ca

    from caspar_backend.adapters.casadi.models import arm_ik

    nlp, bounds = arm_ik()
    S = ca.nlpsol("S", "ipopt", nlp, {"ipopt": {"print_level": 0, "sb": "yes"},
                                      "print_time": False})
    f, ok = np.empty(len(targets)), np.empty(len(targets), bool)
    t0 = time.perf_counter()
    for i, t in enumerate(targets):
        r = S(x0=X0, p=t, **bounds)
        f[i] = float(r["f"])
        ok[i] = S.stats()["success"]
    return time.perf_counter() - t0, f, ok


def _median_time(fn, repeats):
    ts, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts)), out


def main(argv=None):
    from caspar_backend.batch import solve as batch_solve

    batch_solve.KERNEL_ON_CUDA = True           # this benchmark is the kernel's
    # its cold figure is the compile in this process (not the lockstep path standing in
    # while a background compile runs)
    os.environ["CASPAR_BACKGROUND_COMPILE"] = "0"
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=10000)
    ap.add_argument("--sizes", default="1,10,100,1000,10000,100000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--check", type=int, default=200)
    ap.add_argument("--ipopt-procs", type=int, default=8)
    ap.add_argument("--out", default=None)
    ap.add_argument("--commit", default="")
    a = ap.parse_args(argv)

    import cupy as cp
    import numba
    import numba_cuda

    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets

    log = []

    def say(s):
        print(s, flush=True)
        log.append(s)

    gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    say(f"GPU {gpu}; numba {numba.__version__}, numba-cuda {numba_cuda.__version__}, "
        f"CuPy {cp.__version__}; {os.cpu_count()} CPUs")
    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    N = a.targets
    T = arm_targets(N, seed=2)
    rows = []

    def solve(P):
        r = problem.solve_batch(x0=X0, p=P, print_level=0, device="cuda")
        return r

    t0 = time.perf_counter()
    r = solve(T)
    cold = time.perf_counter() - t0
    say(f"cold (compile + first batch of {N}): {cold:.2f} s; paths {dict(Counter(r.path))}")
    warm, r = _median_time(lambda: solve(T), a.repeats)
    say(f"warm batch of {N}: {warm:.4f} s ({1e6 * warm / N:.1f} us/instance); "
        f"statuses {dict(Counter(r.status))}, max it {int(r.iterations.max())}")

    # agreement with the instances' own CPU solves
    C = min(a.check, N)
    st = it = 0
    dfmax = 0.0
    for b in range(C):
        s = problem.solve(x0=X0, p=T[b], print_level=0)
        st += s.status == r.status[b]
        it += s.iterations == r.iterations[b]
        dfmax = max(dfmax, abs(s.f - r.f[b]) / max(1.0, abs(s.f)))
    say(f"vs CPU Problem.solve, first {C}: status equal {st}/{C}, iterations equal "
        f"{it}/{C}, max rel |df| {dfmax:.2e}")

    # IPOPT sequential on this machine's CPU
    chunks = np.array_split(T, a.ipopt_procs)
    with mp.get_context("fork").Pool(a.ipopt_procs) as pool:
        parts = pool.map(_ipopt_chunk, chunks)
    ipopt_s = float(sum(p[0] for p in parts))
    f_ip = np.concatenate([p[1] for p in parts])
    ok_ip = np.concatenate([p[2] for p in parts])
    both = ok_ip & np.array([s == "Solve_Succeeded" for s in r.status])
    dfi = float(np.max(np.abs(f_ip[both] - r.f[both]) / np.maximum(1.0, np.abs(f_ip[both]))))
    say(f"IPOPT sequential, {N} targets: {ipopt_s:.2f} s ({1e3 * ipopt_s / N:.3f} ms/solve; "
        f"{int(ok_ip.sum())} succeeded); max rel |f_kernel - f_ipopt| {dfi:.2e}")
    say(f"speedup vs sequential IPOPT: warm {ipopt_s / warm:.0f}x, cold {ipopt_s / cold:.1f}x")

    def row(B, phase, total, res, note=""):
        c = Counter(res.path)
        rows.append(dict(case="ik", solver="caspar_kernel", device="cuda", B=B, phase=phase,
                         total_s=total, per_instance_us=1e6 * total / B,
                         instances_per_s=B / total,
                         speedup_vs_ipopt=(ipopt_s / N * B) / total,
                         n_kernel=c.get("kernel", 0), n_single=c.get("single", 0),
                         max_iterations=int(res.iterations.max()),
                         statuses=";".join(f"{k}={v}" for k, v in Counter(res.status).items()),
                         note=note))

    rows.append(dict(case="ik", solver="ipopt_seq", device="cpu", B=N, phase="warm",
                     total_s=ipopt_s, per_instance_us=1e6 * ipopt_s / N,
                     instances_per_s=N / ipopt_s, speedup_vs_ipopt=1.0, n_kernel="",
                     n_single="", max_iterations="", statuses=f"success={int(ok_ip.sum())}",
                     note=f"sum of {a.ipopt_procs} processes' sequential loops"))
    row(N, "cold", cold, r, "incl. kernel compile, layout, CuPy start")
    row(N, "warm", warm, r, f"vs CPU solve, first {C}: status {st}/{C}, iterations {it}/{C}, "
        f"max rel df {dfmax:.1e}; vs IPOPT max rel df {dfi:.1e}")
    for B in (int(s) for s in a.sizes.split(",")):
        P = arm_targets(B, seed=3)
        reps = a.repeats if B < 100000 else 1
        t, res = _median_time(lambda: solve(P), reps)
        row(B, "warm", t, res, f"median of {reps}")
        say(f"B={B:>6}: {t:.4f} s, {1e6 * t / B:9.2f} us/instance, {B / t:12.0f}/s, "
            f"{(ipopt_s / N * B) / t:8.1f}x IPOPT, max it {int(res.iterations.max())}, "
            f"paths {dict(Counter(res.path))}")

    if a.out:
        os.makedirs(a.out, exist_ok=True)
        import csv

        with open(os.path.join(a.out, "results.csv"), "w", newline="") as fh:
            w = csv.DictWriter(fh, COLUMNS)
            w.writeheader()
            w.writerows(rows)
        meta = dict(commit=a.commit, date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                    hardware=f"{platform.processor() or platform.machine()}, "
                             f"{os.cpu_count()} cores; GPU: {gpu}, numba-cuda "
                             f"{numba_cuda.__version__}, CuPy {cp.__version__}",
                    tol=1e-8, command="python benchmarks/bench_ik_kernel.py " + " ".join(
                        argv if argv is not None else sys.argv[1:]),
                    reference="IPOPT (casadi 3.8.2 wheel, MUMPS), sequential")
        with open(os.path.join(a.out, "meta.json"), "w") as fh:
            json.dump(meta, fh, indent=1)
        with open(os.path.join(a.out, "log.txt"), "w") as fh:
            fh.write("\n".join(log) + "\n")


if __name__ == "__main__":
    main()
