"""Evaluation speed of a flat model built from three repeated shapes.

    python benchmarks/bench_eval.py [--m 100000] [--n 2000] [--reps 20] [--device cpu]

The model (``tests/exprgen.py::three_shape_model``) has ``m`` constraints drawn in
shuffled order from three shapes over random variable pairs, plus an objective
that is a sum of ``n`` squares; pattern grouping has to find the shapes by
structural hashing.  Printed: build / compile / evaluator-setup time, the
pattern groups, and for constraints, Jacobian and Lagrangian Hessian the median
time per evaluation and the achieved nodes per second, where

    nodes per evaluation = sum over groups of
        (non-leaf nodes of the generated template code for that evaluation) * instances

(the template's value DAG for ``cons``, the DAG of all gradient entries for
``jac``, of all Hessian entries for ``hess``; shared subexpressions counted once).
A benchmark, not a test: it prints a table and asserts nothing beyond the group count.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.support

from tests.support.exprgen import three_shape_model  # noqa: E402

from caspar_backend.expr import topo_order  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402


def template_nodes(roots) -> int:
    return sum(1 for v in topo_order(roots) if v.args)


def timed(f, reps, sync=lambda: None):
    f()
    sync()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        sync()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=100_000, help="constraints")
    ap.add_argument("--n", type=int, default=2_000, help="variables")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args(argv)

    t = time.perf_counter()
    model, _ = three_shape_model(args.m, args.n, seed=1)
    t_build = time.perf_counter() - t
    t = time.perf_counter()
    prob = Problem(model)
    t_compile = time.perf_counter() - t
    t = time.perf_counter()
    ev = prob.evaluator(args.device)
    t_setup = time.perf_counter() - t

    xp = ev.xp
    sync = (lambda: xp.cuda.Device().synchronize()) if args.device != "cpu" else (lambda: None)
    rng = np.random.default_rng(0)
    x = xp.asarray(rng.uniform(-1.0, 1.0, size=prob.n))
    lam = xp.asarray(rng.uniform(-1.0, 1.0, size=prob.m))
    cbuf, jbuf, hbuf = xp.empty(prob.m), xp.empty(ev.nnz_jac), xp.empty(ev.nnz_hess)

    cg, og = prob.constraint_groups, prob.objective_groups
    nodes = {
        "cons": sum(template_nodes([gr.root]) * gr.size for gr in cg),
        "jac": sum(template_nodes([e for _, e in gr.grad]) * gr.size for gr in cg),
        "hess": sum(template_nodes([e for _, e in gr.hess]) * gr.size for gr in cg + og),
    }
    runs = {
        "cons": lambda: ev.cons(x, cbuf),
        "jac": lambda: ev.jac_values(x, jbuf),
        "hess": lambda: ev.hess_values(x, lam, 1.0, hbuf),
    }

    print(f"# caspar evaluation benchmark: three-shape model, device {args.device}")
    print(f"n = {prob.n}, m = {prob.m}, nnz J = {ev.nnz_jac}, nnz H (lower, with "
          f"duplicates) = {ev.nnz_hess}")
    print(f"build model {t_build:.2f} s | Problem (group + derive) {t_compile:.2f} s | "
          f"evaluator setup {t_setup:.2f} s")
    print(f"groups: {len(cg)} constraint + {len(og)} objective")
    for k, gr in enumerate(og + cg):
        print(f"  {gr.kind:<11} group {k}: {gr.size:>7} instances, {gr.n_local_vars} vars, "
              f"{len(gr.grad)} grad / {len(gr.hess)} hess entries, "
              f"{template_nodes([gr.root])} value nodes")
    print()
    print("| evaluation | ms / eval | nodes / eval | nodes / s |")
    print("|---|---|---|---|")
    for name, f in runs.items():
        t = timed(f, args.reps, sync)
        print(f"| {name} | {t * 1e3:.3f} | {nodes[name]:,} | {nodes[name] / t:.3e} |")
    assert len(cg) <= 3 and len(og) <= 1, "pattern grouping regressed"


if __name__ == "__main__":
    main()
