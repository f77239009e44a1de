"""Child process of the Ctrl-C tests
(``python -m tests.support.interrupt_child API [WAIT_S [kernel]]``).

Builds the chained-Rosenbrock problem (N = 200, :mod:`benchmarks.models.chain`), prints
``READY``, runs a solve that would take minutes (``tol = 0``: no iterate converges;
``acceptable_iter = 0``; max_iter 10^6, ~10 ms an iteration; one iteration first, so
that imports and first-use work are done) through ``API`` -- ``core``
(``Problem.solve``), ``legacy`` / ``contrib`` (Pyomo's two interfaces), ``casadi``
(``nlpsol``) --, prints one JSON line describing how it ended, then a default solve of
the same problem and its JSON line.

Without WAIT_S the parent sends SIGINT meanwhile.  With it the child sends SIGINT to
itself (``os.kill``: to the process, as a terminal's Ctrl-C) WAIT_S seconds after the
long solve's call, or with ``kernel`` after the compiled kernel's first call started (a
small problem's first part: :mod:`caspar_backend.compiled.solve`; CasADi then solves the
N = 200 chain too), and adds to the JSON ``latency``: seconds from the signal to the
solve's return, measured here, so that the parent's scheduling does not count, and
``in_kernel``: whether the signal came while that kernel call ran.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

import numpy as np

N = 200
#: the CasADi build of the chain rounds differently; with tol = 0 its solve ends by
#: Restoration_Failed after about N iterations (282 at N = 200: 0.4 s here, before the
#: parent's SIGINT), so it runs at a size where that takes seconds (2,202 iterations,
#: 5.4 s at N = 2,000 on the 2-core VM)
N_CASADI = 2000
#: with the signal inside the compiled kernel (``kernel``): a size the kernel takes (n + m
#: <= 2,000) where its first call lasts long enough on a fast machine for a signal 0.05 s
#: after its start to land inside it (at N = 200 the kernel ended before it on the CI
#: machine: ~200 iterations in under 50 ms)
N_CASADI_KERNEL = 900
LONG = dict(tol=0.0, acceptable_iter=0, max_iter=10**6, print_level=0)


def _pyomo_chain():
    import pyomo.environ as pyo

    from benchmarks.models.chain import P_VALUE

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(0, N + 1)
    m.x = pyo.Var(m.I, initialize=0.0)
    m.p = pyo.Param(initialize=P_VALUE, mutable=True)
    x = m.x
    m.obj = pyo.Objective(expr=sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2
                                   for i in range(N)))
    m.c = pyo.Constraint(pyo.RangeSet(0, N - 1), rule=lambda m, i: (
        3 * x[i + 1] ** 3 + 2 * x[i + 2] - 5 + pyo.sin(x[i + 1] - x[i + 2])
        * pyo.sin(x[i + 1] + x[i + 2]) + 4 * x[i + 1] - x[i] * pyo.exp(x[i] - x[i + 1])
        - 3 * m.p == 0))
    return m


def _core():
    from benchmarks.models.chain import chain_graph
    from caspar_backend import Problem

    pr = Problem(chain_graph(N))

    def solve(**opts):
        r = pr.solve(**opts)
        return dict(status=r.status, success=r.success, iterations=r.iterations,
                    path=r.extra.get("path", "general"),
                    finite=bool(np.all(np.isfinite(r.x)) and np.isfinite(r.f)),
                    history=len(r.history), counts=sum(r.counts.values()),
                    total=r.timings.get("total", 0.0))
    return solve


def _legacy():
    import pyomo.environ as pyo

    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    m = _pyomo_chain()
    opt = pyo.SolverFactory("caspar")

    def solve(**opts):
        res = opt.solve(m, options=opts)
        xs = np.array([v.value for v in m.x.values()], dtype=float)
        return dict(status=str(res.solver.status),
                    termination=str(res.solver.termination_condition),
                    finite=bool(np.all(np.isfinite(xs))), message=str(res.solver.message))
    return solve


def _contrib():
    from pyomo.contrib.solver.common.factory import SolverFactory

    import caspar_backend  # noqa: F401

    m = _pyomo_chain()
    opt = SolverFactory("caspar")

    def solve(**opts):
        res = opt.solve(m, solver_options=opts, raise_exception_on_nonoptimal_result=False)
        xs = np.array([v.value for v in m.x.values()], dtype=float)
        return dict(termination=str(res.termination_condition.name),
                    solution=str(res.solution_status.name),
                    iterations=res.iteration_count, finite=bool(np.all(np.isfinite(xs))))
    return solve


def _casadi(n=N_CASADI):
    from benchmarks.models.chain import chain_casadi
    from caspar_backend.casadi import nlpsol

    nlp, args = chain_casadi(n)
    made = {}

    def function(opts):
        opts = {"print_level": 0, **opts}
        key = tuple(sorted(opts.items()))
        if key not in made:       # an nlpsol Function per option set, as CasADi users do
            made[key] = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": opts})
        return made[key]

    def solve(**opts):
        fn = function(opts)
        sol = fn(**args)
        st = fn.stats()
        x = np.array(sol["x"], dtype=float).ravel()
        return dict(status=st["return_status"], success=bool(st["success"]),
                    iterations=int(st["iter_count"]), finite=bool(np.all(np.isfinite(x))))
    # the long solve's Function is built before READY: the test times a solve's
    # Ctrl-C, not one during nlpsol's construction (tests/solver/test_setup_interrupt.py)
    solve.prepare = function
    return solve


def _batch():
    """``Problem.solve_batch`` of four instances (four values of the chain's p)."""
    from benchmarks.models.chain import P_VALUE, chain_graph
    from caspar_backend import Problem

    pr = Problem(chain_graph(N))
    P = P_VALUE * np.array([[1.0], [1.01], [0.99], [1.02]])

    def solve(**opts):
        r = pr.solve_batch(p=P, **opts)
        return dict(status=sorted(set(r.status)), iterations=r.iterations.tolist(),
                    path=sorted(set(r.path)), finite=bool(np.all(np.isfinite(r.x))),
                    total=r.timings.get("total", 0.0))
    return solve


def _self_signal(solve, wait_s: float, kernel: bool):
    """``solve`` that sends SIGINT to this process ``wait_s`` after its call (``kernel``:
    after the compiled kernel's first call started) and adds ``latency`` and
    ``in_kernel`` to its JSON (module docstring)."""
    from caspar_backend.compiled.kernels import ipm

    t = {}

    def fire():
        t["signal"] = time.perf_counter()
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(wait_s, fire)
    real = ipm.solve_instance

    def traced(*args):          # solve.py imports solve_instance from ipm at each call
        if "kernel" not in t:
            t["kernel"] = None
            if kernel:
                timer.start()
        out = real(*args)
        if t["kernel"] is None:
            t["kernel"] = time.perf_counter()
        return out

    def timed(**opts):
        ipm.solve_instance = traced
        if not kernel:
            timer.start()
        try:
            out = solve(**opts)
        finally:
            done = time.perf_counter()
            ipm.solve_instance = real
            timer.cancel()
        out["latency"] = done - t["signal"] if "signal" in t else None
        out["in_kernel"] = bool("signal" in t and t.get("kernel")
                                and t["signal"] < t["kernel"])
        return out
    return timed


def main(api: str, wait_s: float | None = None, anchor: str = "call") -> None:
    kernel = anchor == "kernel"
    make = dict(core=_core, legacy=_legacy, contrib=_contrib,
                casadi=lambda: _casadi(N_CASADI_KERNEL if kernel else N_CASADI),
                batch=_batch)[api]
    solve = make()
    # imports and first-use work before READY: the first small solve of a process takes
    # the general path, the second loads the compiled path's kernels (dispatch)
    solve(**{**LONG, "max_iter": 1})
    solve(**{**LONG, "max_iter": 1})
    if hasattr(solve, "prepare"):
        solve.prepare(LONG)
    print("READY", flush=True)
    long_solve = solve if wait_s is None else _self_signal(solve, wait_s, kernel)
    print(json.dumps(long_solve(**LONG)), flush=True)
    print(json.dumps(solve(print_level=0)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *([float(sys.argv[2])] if len(sys.argv) > 2 else []), *sys.argv[3:])
