"""Derivative-evaluation speed, NumPy vs CUDA, on a scalable chained problem.

    python benchmarks/bench_eval_gpu.py [N ...]

For each size: compile time (grouping + derivation), CUDA compile time cold and
cached, and per-call time of cons / jac / hess on CPU (NumPy) and GPU (CUDA
events), with the achieved bandwidth against the H200's ~4.8 TB/s floor
estimate (bytes = index tables + data + outputs touched once).  A benchmark,
not a test: prints a table.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.models.chain import chain_blocks  # noqa: E402
from caspar_backend import Problem  # noqa: E402

PEAK_BW = 4.8e12  # H200 HBM3e bytes/s (spec sheet)


def chain(N):
    return chain_blocks(N)


def time_cpu(f, reps=5):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def time_gpu(cp, f, reps=20):
    f()
    cp.cuda.Device().synchronize()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    s.record()
    for _ in range(reps):
        f()
    e.record()
    e.synchronize()
    return cp.cuda.get_elapsed_time(s, e) / 1e3 / reps


def main(sizes):
    import cupy as cp

    os.environ.setdefault("CASPAR_CACHE_DIR", tempfile.mkdtemp())
    rows = []
    for N in sizes:
        t = time.perf_counter()
        model = chain(N)
        t_build = time.perf_counter() - t
        prob = Problem(model)
        t = time.perf_counter()
        gpu = prob.evaluator("cuda")
        t_cold = time.perf_counter() - t
        prob._evaluators.pop("cuda")
        t = time.perf_counter()
        gpu = prob.evaluator("cuda")
        t_cached = time.perf_counter() - t
        cpu = prob.evaluator("cpu")
        rng = np.random.default_rng(0)
        x, lam = rng.uniform(-1, 1, prob.n), rng.standard_normal(prob.m)
        xd, ld = cp.asarray(x), cp.asarray(lam)
        cb, jb, hb = cp.empty(prob.m), cp.empty(gpu.nnz_jac), cp.empty(gpu.nnz_hess)
        jv, hv = np.empty(cpu.nnz_jac), np.empty(cpu.nnz_hess)
        res = {}
        for name, fc, fg, nbytes in (
            ("cons", lambda: cpu.cons(x), lambda: gpu.cons(xd, cb), 8 * prob.m * 8),
            ("jac", lambda: cpu.jac_values(x, jv), lambda: gpu.jac_values(xd, jb),
             8 * prob.m * 6 + 8 * gpu.nnz_jac),
            ("hess", lambda: cpu.hess_values(x, lam, 1.0, hv), lambda: gpu.hess_values(xd, ld, 1.0, hb),
             8 * prob.m * 8 + 8 * gpu.nnz_hess),
        ):
            tc, tg = time_cpu(fc), time_gpu(cp, fg)
            res[name] = (tc, tg, nbytes / PEAK_BW)
        rows.append((N, prob.n, prob.m, gpu.nnz_jac, gpu.nnz_hess, t_build, prob.compile_time,
                     t_cold, t_cached, res))
    print(f"\n# caspar evaluation benchmark ({cp.cuda.runtime.getDeviceProperties(0)['name'].decode()})")
    print("| N | n | m | nnz J | nnz H | model build s | compile s | CUDA cold s | CUDA cached s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for N, n, m, nj, nh, tb, tc, t0, t1, _ in rows:
        print(f"| {N} | {n} | {m} | {nj} | {nh} | {tb:.2f} | {tc:.2f} | {t0:.2f} | {t1:.3f} |")
    print("\n| N | eval | NumPy ms | CUDA ms | speedup | bandwidth floor ms |")
    print("|---|---|---|---|---|---|")
    for N, *_, res in rows:
        for name, (tc, tg, floor) in res.items():
            print(f"| {N} | {name} | {tc*1e3:.3f} | {tg*1e3:.4f} | {tc/tg:.0f}x | {floor*1e3:.4f} |")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10**4, 10**5, 10**6])
