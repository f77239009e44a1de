"""Benchmark: batched LDL^T (caspar_backend.batch.ldl.BatchLDL), factorize + solve.

    python benchmarks/bench_batch_ldl.py [--device cpu|cuda] [--repeats 5] [--quick]
        [--case arm|kkt8|mpc ...] [--B 1000 10000 ...] [--order md|qdldl]

Cases (KKT matrices assembled by AugmentedKKT, tests/batch/ldl_support.py):

* ``arm``: the three-link-arm inverse kinematics KKT (3 angles + 1 slack, 1 row: N = 5)
  at B = 10^3, 10^4, 10^5;
* ``kkt8``: a random N = 8 KKT (5 variables with a dense Hessian, 1 slack, 2 rows) at
  the same B;
* ``mpc``: a banded MPC KKT (90 stages of 4 states + 2 controls, N = 904, half
  bandwidth ~10) at B = 100 and 1000.

Values are computed for up to 1000 instances and tiled to B (the timings do not depend
on them).  Printed per case: N, nnz, nnz(L), levels, the symbolic phase's seconds, and
the median over ``--repeats`` of factorize (all instances), one solve and one matvec,
in milliseconds and in microseconds per instance.  ``--case`` runs only the named
cases, ``--B`` replaces every case's batch sizes, ``--order qdldl`` eliminates in QDLDL's
AMD order (as the batched KKT does) instead of caspar's minimum degree.  On a shared machine compare
numbers within one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: tests.batch


def _cases(quick):
    from tests.batch.ldl_support import arm_case, kkt_case, mpc_case

    small = (1000, 10000) if quick else (1000, 10000, 100000)
    yield "arm", lambda: arm_case(0, B=1000), small
    yield "kkt8", lambda: kkt_case(0, nx=5, m=2, n_slack=1, w_density=1.0, B=1000), small
    yield "mpc", lambda: mpc_case(0, T=90, B=100), (100,) if quick else (100, 1000)


def _qdldl_perm(s, values):
    """QDLDL's AMD permutation of the structure ``s`` (read from a factorization of
    one instance's values)."""
    import qdldl
    import scipy.sparse as sp

    a = sp.csc_matrix((values, s.indices, s.indptr), shape=(s.n, s.n))
    return np.asarray(qdldl.Solver(a, upper=True).factors()[2], np.int64)


def _median_ms(fn, repeats, sync):
    times = []
    for _ in range(repeats):
        sync()
        t = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the smaller B only")
    ap.add_argument("--case", nargs="+", choices=("arm", "kkt8", "mpc"),
                    help="only these cases")
    ap.add_argument("--B", nargs="+", type=int, help="these batch sizes for every case")
    ap.add_argument("--order", choices=("md", "qdldl"), default="md")
    args = ap.parse_args(argv)
    from caspar_backend.batch.ldl import BatchLDL

    if args.device == "cuda":
        import cupy as xp

        def sync():
            xp.cuda.Device().synchronize()
    else:
        xp = np

        def sync():
            pass
    print(f"{'case':6} {'N':>5} {'nnz':>6} {'nnzL':>6} {'lev':>4} {'B':>7} "
          f"{'symb s':>7} {'fact ms':>9} {'solve ms':>9} {'matvec ms':>9} "
          f"{'fact us/inst':>12} {'solve us/inst':>13}")
    for name, make, sizes in _cases(args.quick):
        if args.case and name not in args.case:
            continue
        sizes = args.B or sizes
        s, v0 = make()
        perm = _qdldl_perm(s, v0[0]) if args.order == "qdldl" else None
        for B in sizes:
            v = xp.asarray(np.tile(v0, (-(-B // len(v0)), 1))[:B])
            t = time.perf_counter()
            f = BatchLDL(s, B, xp=xp, perm=perm)
            symb = time.perf_counter() - t
            rhs = xp.asarray(np.random.default_rng(0).standard_normal((B, s.n)))
            out = xp.empty((B, s.n))
            f.factorize(v)          # warm-up (kernel compilation, first-touch memory)
            f.solve(rhs, out=out)
            f.matvec(v, rhs, out=out)
            fact = _median_ms(lambda: f.factorize(v), args.repeats, sync)
            solve = _median_ms(lambda: f.solve(rhs, out=out), args.repeats, sync)
            mv = _median_ms(lambda: f.matvec(v, rhs, out=out), args.repeats, sync)
            print(f"{name:6} {s.n:5d} {s.nnz:6d} {f.nnz_l:6d} {f.n_levels:4d} {B:7d} "
                  f"{symb:7.3f} {fact:9.2f} {solve:9.2f} {mv:9.2f} "
                  f"{1e3 * fact / B:12.3f} {1e3 * solve / B:13.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
