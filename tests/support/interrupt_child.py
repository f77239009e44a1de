"""Child process of the Ctrl-C tests
(``python -m tests.support.interrupt_child API [WAIT_S [kernel]]``).

Builds the chained-Rosenbrock problem (N = 200, :mod:`benchmarks.models.chain`), prints
``READY``, runs a solve that would take minutes (``tol = 1e-300``: no iterate converges;
``acceptable_iter = 0``; ``tiny_step_y_tol = 0``: tiny steps never end it; max_iter
10^6, ~10 ms an iteration; one iteration first, so
that imports and first-use work are done) through ``API`` -- ``core``
(``Problem.solve``), ``legacy`` / ``contrib`` (Pyomo's two interfaces), ``casadi``
(``nlpsol``) --, prints one JSON line describing how it ended, then a default solve of
the same problem and its JSON line.

``python -m tests.support.interrupt_child API 0 eject`` solves the Waechter-Biegler
example instead (:data:`WB_X0`; default options), which the compiled kernel leaves for
the restoration phase, and sends SIGINT when the kernel's call that ejects has returned,
still inside the solve's Ctrl-C block (:func:`_signal_at_ejection`); the JSON adds
``kernel``: that call's [code, iterations].  ``... API K handover`` runs the long solve
and sends SIGINT while the compiled path builds the resume point of its hand-over K (0:
the first), between the kernel's Ctrl-C block and the general path's
(:func:`_signal_at_handover`).

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
#: parent's SIGINT), so it runs at a size where that takes seconds (at N = 2,000 about
#: 2,100 iterations: 5.4 s on the general path alone, under 2 s since the compiled
#: kernels take the solve back after each restoration phase; N = 5,000 on the 2-core VM:
#: ~1,400 iterations in the first 2 s)
N_CASADI = 5000
#: with the signal inside the compiled kernel (``kernel``): a size the kernel takes (n + m
#: <= 2,000) where its first call lasts long enough on a fast machine for a signal 0.05 s
#: after its start to land inside it (at N = 200 the kernel ended before it on the CI
#: machine: ~200 iterations in under 50 ms)
N_CASADI_KERNEL = 900
#: (tiny_step_y_tol 0: no tiny step flags the barrier update, so the tiny steps at mu's
#: floor go on -- IPOPT's rule with that option; by default a second one in a row ends
#: the solve with Search_Direction_Becomes_Too_Small after ~18 iterations)
LONG = dict(tol=1e-300, acceptable_iter=0, max_iter=10**6, print_level=0, tiny_step_y_tol=0.0)


#: the Waechter & Biegler (2000) example of tests/support/problem_bank.py
#: (restoration_to_local_infeasibility_wb): min x1 s.t. x1^2 - x2 - 1 = 0,
#: x1 - x3 - 0.5 = 0, x2, x3 >= 0, from x0 = (-2, 1, 1); the compiled kernel's line
#: search fails at its iteration 4 and it ejects the solve to the general path's
#: restoration phase
WB_X0 = (-2.0, 1.0, 1.0)


def _pyomo_wb():
    import pyomo.environ as pyo

    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1, 2], bounds=lambda m, i: (None if i == 0 else 0.0, None))
    x = m.x
    m.obj = pyo.Objective(expr=x[0])
    m.c1 = pyo.Constraint(expr=x[0] ** 2 - x[1] - 1 == 0)
    m.c2 = pyo.Constraint(expr=x[0] - x[2] - 0.5 == 0)
    return m


def _wb_casadi():
    import casadi as ca

    x = ca.SX.sym("x", 3)
    nlp = {"x": x, "f": x[0], "g": ca.vertcat(x[0] ** 2 - x[1] - 1, x[0] - x[2] - 0.5)}
    return nlp, dict(x0=list(WB_X0), lbx=[-np.inf, 0, 0], lbg=0, ubg=0)


def _wb_problem():
    from caspar_backend import Graph, NLPModel, Problem

    g = Graph()
    x = [g.var(i) for i in range(3)]
    return Problem(NLPModel(g, x[0], [x[0] ** 2 - x[1] - 1, x[0] - x[2] - 0.5],
                            [-np.inf, 0.0, 0.0], [np.inf] * 3, [0.0, 0.0], [0.0, 0.0],
                            x0=list(WB_X0)))


def _start(m, x0):
    """The Pyomo model's variables back at ``x0`` (None: as they are): each solve of the
    ejection test starts from the same point, not from the iterate the last one loaded."""
    if x0 is not None:
        for v, value in zip(m.x.values(), x0):
            v.set_value(value)


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


def _core(pr=None):
    from benchmarks.models.chain import chain_graph
    from caspar_backend import Problem

    pr = Problem(chain_graph(N)) if pr is None else pr

    def solve(**opts):
        r = pr.solve(**opts)
        return dict(status=r.status, success=r.success, iterations=r.iterations,
                    path=r.extra.get("path", "general"),
                    finite=bool(np.all(np.isfinite(r.x)) and np.isfinite(r.f)),
                    history=len(r.history), counts=sum(r.counts.values()),
                    total=r.timings.get("total", 0.0))
    return solve


def _legacy(m=None, x0=None):
    import pyomo.environ as pyo

    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    m = _pyomo_chain() if m is None else m
    opt = pyo.SolverFactory("caspar")

    def solve(**opts):
        _start(m, x0)
        res = opt.solve(m, options=opts)
        xs = np.array([v.value for v in m.x.values()], dtype=float)
        return dict(status=str(res.solver.status),
                    termination=str(res.solver.termination_condition),
                    finite=bool(np.all(np.isfinite(xs))), message=str(res.solver.message))
    return solve


def _contrib(m=None, x0=None):
    from pyomo.contrib.solver.common.factory import SolverFactory

    import caspar_backend  # noqa: F401

    m = _pyomo_chain() if m is None else m
    opt = SolverFactory("caspar")

    def solve(**opts):
        _start(m, x0)
        res = opt.solve(m, solver_options=opts, raise_exception_on_nonoptimal_result=False)
        xs = np.array([v.value for v in m.x.values()], dtype=float)
        return dict(termination=str(res.termination_condition.name),
                    solution=str(res.solution_status.name),
                    iterations=res.iteration_count, finite=bool(np.all(np.isfinite(xs))))
    return solve


def _casadi(n=N_CASADI, built=None):
    from benchmarks.models.chain import chain_casadi
    from caspar_backend.casadi import nlpsol

    nlp, args = chain_casadi(n) if built is None else built
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


def _send_sigint(t: dict) -> None:
    """SIGINT to this process (as a terminal's Ctrl-C), its time in ``t["signal"]``."""
    t["signal"] = time.perf_counter()
    os.kill(os.getpid(), signal.SIGINT)


def _with_patch(solve, module, name: str, traced, t: dict):
    """``solve`` with ``module.name`` replaced by ``traced`` during the call; its JSON
    gains ``latency``: seconds from ``t["signal"]`` to the solve's return (None if no
    signal was sent)."""
    def timed(**opts):
        real = getattr(module, name)
        setattr(module, name, traced)
        try:
            out = solve(**opts)
        finally:
            done = time.perf_counter()
            setattr(module, name, real)
        out["latency"] = done - t["signal"] if "signal" in t else None
        return out
    return timed


def _signal_at_ejection(solve):
    """``solve`` that sends SIGINT to this process when its first compiled-kernel call
    that ejects (code < 0) has returned, before the solve's Ctrl-C block around it ends:
    the Ctrl-C of a user who pressed it during the iteration in which the kernel ejects,
    after the kernel's last read of its stop slot.  Adds ``latency`` (seconds from the
    signal to the solve's return) and ``kernel`` ([code, iterations] of that call, None
    if no call ejected) to its JSON."""
    from caspar_backend.compiled.kernels import ipm

    t = {}
    real = ipm.solve_instance

    def traced(*args):          # solve.py imports solve_instance from ipm at each call
        out = real(*args)
        if out[0] < 0 and "signal" not in t:
            t["kernel"] = [int(out[0]), int(out[1])]
            _send_sigint(t)
        return out

    timed = _with_patch(solve, ipm, "solve_instance", traced, t)

    def with_kernel(**opts):
        out = timed(**opts)
        out["kernel"] = t.get("kernel")
        return out
    return with_kernel


def _signal_at_handover(solve, turn: int):
    """``solve`` that sends SIGINT to this process while the compiled path builds the
    resume point of its hand-over number ``turn`` (0: the first) to the general path
    (:func:`caspar_backend.compiled.resume.resume_point`): after the kernel's own Ctrl-C
    block ended, before the general path's began.  Adds ``latency`` (seconds from the
    signal to the solve's return; None if the solve never got there) to its JSON."""
    from caspar_backend.compiled import solve as compiled_solve

    t = {"calls": 0}
    real = compiled_solve.resume_point

    def traced(*args):
        if t["calls"] == turn:
            _send_sigint(t)
        t["calls"] += 1
        return real(*args)

    return _with_patch(solve, compiled_solve, "resume_point", traced, t)


def main(api: str, wait_s: float | None = None, anchor: str = "call") -> None:
    kernel = anchor == "kernel"
    eject = anchor == "eject"
    if eject:
        make = dict(core=lambda: _core(_wb_problem()),
                    legacy=lambda: _legacy(_pyomo_wb(), WB_X0),
                    contrib=lambda: _contrib(_pyomo_wb(), WB_X0),
                    casadi=lambda: _casadi(built=_wb_casadi()))[api]
    else:
        make = dict(core=_core, legacy=_legacy, contrib=_contrib,
                    casadi=lambda: _casadi(N_CASADI_KERNEL if kernel else N_CASADI),
                    batch=_batch)[api]
    solve = make()
    run = dict(print_level=0) if eject else LONG
    # imports and first-use work before READY: the first small solve of a process takes
    # the general path, the second loads the compiled path's kernels (dispatch)
    solve(**{**LONG, "max_iter": 1})
    solve(**{**LONG, "max_iter": 1})
    if hasattr(solve, "prepare"):
        solve.prepare(run)
    print("READY", flush=True)
    if eject:
        long_solve = _signal_at_ejection(solve)
    elif anchor == "handover":
        long_solve = _signal_at_handover(solve, int(wait_s))
    else:
        long_solve = solve if wait_s is None else _self_signal(solve, wait_s, kernel)
    print(json.dumps(long_solve(**run)), flush=True)
    print(json.dumps(solve(print_level=0)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], *([float(sys.argv[2])] if len(sys.argv) > 2 else []), *sys.argv[3:])
