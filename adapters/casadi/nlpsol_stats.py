"""``stats()`` and ``print_time`` of ``nlpsol(..., 'caspar', ...)``: casadi's names for a
solve's statistics, for one solve and for a batch of them.

One solve (:func:`solve_stats`): casadi's Nlpsol/IPOPT keys ``return_status``,
``success``, ``unified_return_status``, ``iter_count``, ``t_wall_total``,
``t_proc_total``, ``n_call_<f>``, ``t_wall_<f>`` and ``t_proc_<f>`` for casadi's
functions ``nlp_f``, ``nlp_g``, ``nlp_grad_f``, ``nlp_jac_g``, ``nlp_hess_l``,
``nlp_grad`` and ``callback_fun`` (the seconds of caspar's own evaluations of each kind;
NaN where the compiled interior point evaluated them inside its kernels, which do not
time them one by one; 0 for a function not called), ``iterations`` (per-iteration
lists) and, under ``'caspar'``, caspar's own detail.

A batch of B instances solved in one call (:func:`batch_stats`; the B-column calls and
``map(B)`` of :mod:`.nlpsol_batch`): casadi evaluates a B-column call column by column,
each evaluation overwriting the statistics, so after it ``stats()`` describes the
*last* column.  caspar keeps that: ``return_status``, ``success``,
``unified_return_status`` and ``iter_count`` are instance B-1's; ``t_wall_total`` and
``t_proc_total`` time the whole call; ``'batch'`` holds one list entry per instance::

    'batch': {'size': B, 'return_status': [str]*B, 'success': [bool]*B,
              'unified_return_status': [str]*B, 'iter_count': [int]*B,
              'message': [str]*B, 'path': [str]*B, 'reason': [str]*B,
              'timings': {'setup'|'lockstep'|'single'|'total': seconds}}

(``path``/``reason``: how each instance was solved, see
:class:`~caspar_backend.batch.result.BatchResult`).  The per-iteration ``iterations``
lists and the ``n_call_nlp_*`` counts are per solve and are not kept for a batch.

The dicts are built when ``stats()`` is first read after a call (:class:`LastStats`), not
per call: a loop of solves that never reads them does not pay for them.
"""

from __future__ import annotations

import sys
from typing import Callable, final

from caspar_backend.solver.status import STATUSES

#: IPOPT status -> casadi's unified_return_status, as casadi's IpoptInterface sets it
#: (ipopt_interface.cpp: success -> SUCCESS; Maximum_Iterations/CpuTime/WallTime ->
#: LIMITED; everything else keeps Nlpsol's initial SOLVER_RET_UNKNOWN, including
#: Infeasible_Problem_Detected -- casadi's ipopt never reports SOLVER_RET_INFEASIBLE),
#: except Invalid_Number_Detected -> SOLVER_RET_NAN, the unified status casadi has for it:
#: its ipopt interface never sets it (casadi's nlpsol tests exempt ipopt from the rule
#: that a NaN in an evaluation reports it), its MadNLP interface (the same algorithm) does.
#: A test checks every row of caspar's status table is here.
UNIFIED_RETURN_STATUS = {
    name: ("SOLVER_RET_SUCCESS" if st.success else
           "SOLVER_RET_LIMITED" if name in ("Maximum_Iterations_Exceeded",
                                            "Maximum_CpuTime_Exceeded",
                                            "Maximum_WallTime_Exceeded") else
           "SOLVER_RET_NAN" if name == "Invalid_Number_Detected" else
           "SOLVER_RET_UNKNOWN")
    for name, st in STATUSES.items()
}


@final
class LastStats:
    """The statistics of a Function's last numeric evaluation, built on first read
    (final).  :meth:`record` keeps ``build`` (``() -> dict``, e.g. :func:`solve_stats`
    bound to one solve's result); :meth:`get` builds the dict once and returns it, None
    before any record."""

    __slots__ = ("_build", "_stats")

    def __init__(self):
        self._build: Callable[[], dict] | None = None
        self._stats: dict | None = None

    def record(self, build: Callable[[], dict]) -> None:
        self._build, self._stats = build, None

    def get(self) -> dict | None:
        build = self._build
        if build is not None:
            self._stats, self._build = build(), None
        return self._stats


#: casadi's nlpsol function name -> caspar's evaluation kind (EvalCounter's)
NLP_FUNCTIONS = (("nlp_f", "obj"), ("nlp_g", "cons"), ("nlp_grad_f", "grad"),
                 ("nlp_jac_g", "jac"), ("nlp_hess_l", "hess"))


def solve_stats(res, wall: float, proc: float, compile_time: float, device: str,
                callback=None) -> dict:
    """The statistics of one solve (``res`` a
    :class:`~caspar_backend.solver.result.SolveResult`; ``callback``: the user's
    iteration callback's ``(calls, wall seconds, process seconds)``, or None); see the
    module doc."""
    c = res.counts
    hist = list(res.history)
    st = {
        "return_status": res.status,
        "success": bool(res.success),
        "unified_return_status": UNIFIED_RETURN_STATUS[res.status],
        "iter_count": int(res.iterations),
        "t_wall_total": wall,
        "t_proc_total": proc,
        "n_call_nlp_f": int(c.get("obj", 0)),
        "n_call_nlp_grad_f": int(c.get("grad", 0)),
        # (a problem without constraints evaluates none, as casadi counts for ipopt)
        "n_call_nlp_g": int(c.get("cons", 0)) if len(res.g) else 0,
        "n_call_nlp_jac_g": int(c.get("jac", 0)) if len(res.g) else 0,
        "n_call_nlp_hess_l": int(c.get("hess", 0)),
        "iterations": {
            "obj": [r.objective for r in hist],
            "inf_pr": [r.inf_pr for r in hist],
            "inf_du": [r.inf_du for r in hist],
            "mu": [r.mu for r in hist],
            "d_norm": [r.d_norm for r in hist],
            "regularization_size": [r.regularization for r in hist],
            "alpha_pr": [r.alpha_pr for r in hist],
            "alpha_du": [r.alpha_du for r in hist],
            "ls_trials": [r.ls for r in hist],
        },
        # caspar's own detail, under one key so casadi's names stay casadi's
        "caspar": {
            "message": res.message,
            "kind": res.kind,
            "timings": dict(res.timings),
            "final_errors": dict(res.final_errors),
            "compile_time": compile_time,
            "device": device,
            "extra": res.extra,
        },
    }
    if res.timings:
        st["t_wall_nlp_eval"] = float(res.timings.get("function_evaluations", 0.0))
    for name, kind in NLP_FUNCTIONS:
        if st[f"n_call_{name}"] == 0:
            wall_s = proc_s = 0.0
        else:       # (NaN: evaluated inside the compiled kernels, not timed there)
            wall_s, proc_s = res.eval_seconds.get(kind, (float("nan"), float("nan")))
        st[f"t_wall_{name}"], st[f"t_proc_{name}"] = float(wall_s), float(proc_s)
    # casadi's nlp_grad (the Lagrangian's gradient for the final multipliers): caspar
    # computes those in its solve, without the Function
    st["n_call_nlp_grad"], st["t_wall_nlp_grad"], st["t_proc_nlp_grad"] = 0, 0.0, 0.0
    calls, cb_wall, cb_proc = callback if callback is not None else (0, 0.0, 0.0)
    st["n_call_callback_fun"] = int(calls)
    st["t_wall_callback_fun"], st["t_proc_callback_fun"] = float(cb_wall), float(cb_proc)
    return st


def batch_stats(batch, wall: float, proc: float, compile_time: float, device: str) -> dict:
    """The statistics of a batched call (``batch`` a non-empty
    :class:`~caspar_backend.batch.result.BatchResult`); see the module doc."""
    status = list(batch.status)
    success = [bool(STATUSES[s].success) for s in status]
    unified = [UNIFIED_RETURN_STATUS[s] for s in status]
    iters = [int(k) for k in batch.iterations]
    return {
        "return_status": status[-1],
        "success": success[-1],
        "unified_return_status": unified[-1],
        "iter_count": iters[-1],
        "t_wall_total": wall,
        "t_proc_total": proc,
        "batch": {
            "size": len(status),
            "return_status": status,
            "success": success,
            "unified_return_status": unified,
            "iter_count": iters,
            "message": list(batch.message),
            "path": list(batch.path),
            "reason": list(batch.reason),
            "timings": dict(batch.timings),
        },
        "caspar": {
            "message": batch.message[-1],
            "kind": "batch",
            "timings": dict(batch.timings),
            "compile_time": compile_time,
            "device": device,
        },
    }


def print_time(name: str, res, wall: float, proc: float) -> None:
    """casadi's timing table (ProfilingData rows) for one solve; caspar times its
    phases, not each oracle."""
    t, c = res.timings, res.counts
    # (label, t_proc or None, t_wall, number of calls or None where not counted)
    _table(name, [("nlp_eval", None, t.get("function_evaluations", 0.0), sum(c.values())),
                  ("kkt_factor", None, t.get("kkt_factorization", 0.0), None),
                  ("kkt_solve", None, t.get("kkt_solve", 0.0), None),
                  ("total", proc, wall, 1)])


def print_batch_time(name: str, batch, wall: float, proc: float) -> None:
    """The timing table of a batched call: the batch's phases and the total, whose
    n_eval is the number of instances (so the averages are per instance)."""
    t, size = batch.timings, len(batch.status)
    _table(name, [("setup", None, t.get("setup", 0.0), None),
                  ("lockstep", None, t.get("lockstep", 0.0), None),
                  ("single", None, t.get("single", 0.0), None),
                  ("total", proc, wall, size)])


def _table(name, rows) -> None:
    w = sys.stdout.write
    w(f"{name:>12s}  :   t_proc      (avg)   t_wall      (avg)    n_eval\n")
    for label, tp, tw, n in rows:
        k = max(n or 1, 1)
        proc_s = f"{fmt(tp)} ({fmt(tp / k)})" if tp is not None else " " * 20
        avg = f"({fmt(tw / k)})" if n else " " * 10
        w(f"{label:>12s}  | {proc_s} {fmt(tw)} {avg} {'' if n is None else n:>9}\n")


def fmt(t: float) -> str:
    """casadi's time format: 3 significant digits with a unit, 8 wide."""
    for scale, unit in ((1.0, " s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if t >= scale or unit == "ns":
            return f"{t / scale:6.2f}{unit}"
    return f"{t:6.2f} s"
