"""Profile: where one instance's iteration goes inside the compiled kernel (CPU build).

    python benchmarks/profile_kernel_parts.py [--problem vdp|ik] [--calls 2000]

The kernel (:mod:`caspar_backend.compiled.kernels`) is one Numba function per machine, so
a profiler sees one call.  This solves one instance of the problem with
``solve_many.solve_rows`` (Van der Pol collocation N = 50 with its initial state as p, or
the three-link arm IK), then calls the iteration's pieces one at a time on that
instance's workspace row, ``--calls`` times each: the tape evaluations
(``tape_eval.ev_zeroth``: f and g; ``ev_first``: gradient and Jacobian; ``ev_hess``: the
Lagrangian's Hessian) and QDLDL's factorization and solve of its KKT system (at the
solution's values).  Prints microseconds per call beside the solve's microseconds per
iteration; a call from Python adds ~1 us.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

if __package__ in (None, ""):      # run as a file: the checkout root on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _slot(buf, offsets, k):
    """Slot ``k`` of a workspace row (the kernels' ``_f`` / ``_i``, from Python)."""
    return buf[offsets[k]:offsets[k + 1]]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python benchmarks/profile_kernel_parts.py")
    ap.add_argument("--problem", choices=("vdp", "ik"), default="vdp")
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args(argv)

    from benchmarks.bench_batch import ik_workload, vdp_workload
    from caspar_backend import from_casadi
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import group_layout
    from caspar_backend.compiled.kernels import qdldl, slots as S, tape_eval
    from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
    from caspar_backend.compiled.kernels.solve_many import solve_rows
    from caspar_backend.compiled.options import option_vector, resolve
    from caspar_backend.compiled.thread_workspaces import ThreadWorkspaces

    work = vdp_workload(1) if a.problem == "vdp" else ik_workload(1)
    P = from_casadi(work.nlp, **work.args)
    P.solve_batch(p=work.params, print_level=0)        # the kernels compiled or loaded
    sub = batch_inputs(P, 1, p=work.params)
    lay = group_layout(P, sub)
    O = option_vector(resolve({"print_level": 0})[0]).copy()
    hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((1, OUT_SIZE))
    code, iters, fval = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)

    def solve():
        ws = ThreadWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, 1)
        solve_rows(*ws.args(slice(0, 1), O, hist, outs, code, iters, fval))
        return ws

    ws = solve()
    t = time.perf_counter()
    for _ in range(20):
        solve()
    per_solve = (time.perf_counter() - t) / 20
    it = int(iters[0])
    print(f"{a.problem}: n = {P.n}, m = {P.m}; one solve {1e3 * per_solve:.3f} ms, {it} "
          f"iterations, {1e6 * per_solve / it:.1f} us per iteration (workspace included)")
    Fb, FO, Ib, IO = ws.Fbuf[0], ws.FO, ws.Ibuf[0], ws.IO     # the solved instance's
    g = np.empty(P.m)
    grad = np.empty(_slot(Fb, FO, S.F_GRAD_F).size)
    jac = np.empty(_slot(Fb, FO, S.F_JAC_VALS).size)
    hess = np.empty(_slot(Fb, FO, S.F_HV).size)
    lam = np.ones(P.m)
    K = _slot(Fb, FO, S.F_K_VALUES).copy()
    rhs = np.random.default_rng(0).standard_normal(_slot(Fb, FO, S.F_KKT_RHS).size)
    sol = np.empty_like(rhs)
    pieces = {
        "ev_zeroth": lambda: tape_eval.ev_zeroth(Fb, FO, Ib, IO, g),
        "ev_first": lambda: tape_eval.ev_first(Fb, FO, Ib, IO, grad, jac),
        "ev_hess": lambda: tape_eval.ev_hess(Fb, FO, Ib, IO, lam, 1.0, hess),
        "ldl_factor": lambda: qdldl.ldl_factor(Fb, FO, Ib, IO, K),
        "ldl_solve": lambda: qdldl.ldl_solve(Fb, FO, Ib, IO, rhs, sol),
    }
    for name, fn in pieces.items():
        fn()
        t = time.perf_counter()
        for _ in range(a.calls):
            fn()
        print(f"  {name:11s} {1e6 * (time.perf_counter() - t) / a.calls:9.2f} us")
    print(f"  KKT rows {rhs.size}, nnz(K) {K.size}, "
          f"nnz(L) {_slot(Fb, FO, S.F_L_VALUES).size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
