"""Benchmark: the batch evaluator on the three-link arm IK (bench_small.ik_problem).

    python benchmarks/bench_batch_eval.py [--sizes 1000,10000,100000] [--device cpu|cuda]
        [--repeats 7] [--chunk C]

For each batch size B: the seconds to build ``BatchEvaluator(problem, B)`` (the
replicated problem, its tiled layout, the gather maps, the replicated evaluator) and the
best over ``--repeats`` (the least disturbed by other work on a shared machine) of one ``zeroth``, ``first`` and ``hess`` call for all B
instances (random joint angles and targets, fixed seed; CPU chunks of ``--chunk``
instances, default ``default_chunk``), plus the per-instance cost in
microseconds and, for reference, one single-evaluator instance's (obj + cons, grad +
jac_values, hess_values) on the CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))


def _best_seconds(fn, repeats, sync):
    ts = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def main(argv=None) -> int:
    from benchmarks.bench_small import ik_problem, ik_targets
    from caspar_backend import from_casadi
    from caspar_backend.batch.evaluator import BatchEvaluator

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--chunk", type=int, default=None)
    a = ap.parse_args(argv)
    nlp, bounds = ik_problem()
    prob = from_casadi(nlp, **bounds, p=[1.0, 0.5])
    rng = np.random.default_rng(0)

    ev = prob.evaluator("cpu")
    x, y = rng.uniform(-np.pi, np.pi, 3), np.ones(1)
    single = [_best_seconds(f, 50, lambda: None) for f in (
        lambda: (ev.obj(x), ev.cons(x)), lambda: (ev.grad(x), ev.jac_values(x)),
        lambda: ev.hess_values(x, y, 1.0))]
    print(f"single instance (CPU): zeroth {single[0] * 1e6:.1f} us, first "
          f"{single[1] * 1e6:.1f} us, hess {single[2] * 1e6:.1f} us")
    print(f"{'B':>8} {'chunk':>7} {'build s':>9} {'zeroth s':>10} {'first s':>10} {'hess s':>10} "
          f"{'us/inst z/f/h':>18}")
    for B in (int(s) for s in a.sizes.split(",")):
        t0 = time.perf_counter()
        be = BatchEvaluator(prob, B, device=a.device, chunk_size=a.chunk)
        build = time.perf_counter() - t0
        xp = be.xp
        sync = (xp.cuda.Device().synchronize if be.device == "cuda" else (lambda: None))
        be.set_params(ik_targets(B))
        X = xp.asarray(rng.uniform(-np.pi, np.pi, (B, 3)))
        Y, of = xp.asarray(rng.standard_normal((B, 1))), xp.asarray(rng.uniform(0.5, 2, B))
        f, g, gr = xp.empty(B), xp.empty((B, be.m)), xp.empty((B, be.n))
        J, H = xp.empty((B, len(be.jac_rows))), xp.empty((B, len(be.hess_rows)))
        t = [_best_seconds(fn, a.repeats, sync) for fn in (
            lambda: be.zeroth(X, f, g), lambda: be.first(X, gr, J),
            lambda: be.hess(X, Y, of, H))]
        per = "/".join(f"{v / B * 1e6:.2f}" for v in t)
        print(f"{B:>8} {be.chunk_size:>7} {build:>9.3f} {t[0]:>10.4f} {t[1]:>10.4f} {t[2]:>10.4f} {per:>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
