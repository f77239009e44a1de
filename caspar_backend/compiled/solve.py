"""``solve_compiled``: one solve of a compiled problem by the compiled interior point, or
``None`` where the general path (``Problem.solve``) must solve instead.

The compiled path runs caspar's interior point (the lockstep batch path with B = 1, and
the rare paths listed below that the kernels take themselves) through the Numba kernels
of :mod:`.kernels`: the same iterates as ``Problem.solve`` --
status and iterations equal, x and f bit for bit (the general path evaluates with the
same tape interpreter, :mod:`.tape_evaluator`; with ``cpu_evaluator='numpy'`` a model
using exp/log10/tanh/pow agrees to rounding: NumPy's SIMD versions of these differ from
libm by 1-3 ulp on a few percent of arguments).  It returns ``None``,
having changed nothing the caller sees, when

* an option is not implemented (:mod:`.options`), or the model has opaque calls
  (``problem.extended``), an expression the tape cannot express
  (:class:`.tape.Unsupported`) or a KKT system the general path factorizes densely
  (:func:`..linsolve.qdldl.dense_kkt`);
* the solve reaches a path the kernels do not implement (restoration, the pivoting
  switch, the refinement fall-backs past the static term, a full filter, ...:
  batch/state.py's ejection reasons; the kernels take a zero pivot at delta_w = 0, the
  static-term fall-backs and the watchdog themselves).  The caller's general path then
  goes on from the start of that iteration (:mod:`.resume`; :func:`solve_checked`
  returns the point), or solves from the start where the point cannot be resumed, as
  ``solve_batch`` does with an ejected instance -- unless a Ctrl-C came while the
  kernel ran: the solve then ends at the kernel's last iterate (:func:`stops_here`).

Cost: the kernels compile once per machine (about a minute of CPU; cached under
``$CASPAR_CACHE_DIR/numba``, see :mod:`.kernels._jit`); a layout is built once per
problem and bound structure; a solve allocates only its result arrays.
"""
from __future__ import annotations

import collections
import dataclasses
import sys
import threading
import time
import weakref
from types import SimpleNamespace

import numpy as np

from ..model import as_vector, check_inputs
from ..solver.compat import open_output
from ..solver.interrupt import sigint_as_stop
from ..evaluators.layout import Layout
from ..solver.log import (IterationLog, bound_violation, problem_statistics, row_kinds,
                          scaling_evaluations, summary, user_options)
from ..solver.result import SolveResult
from ..solver.status import STATUSES
from .kernels.record import (COUNT_KEYS, HIST_COLUMNS, OUT_N_INVALID,
                             OUT_N_OBJ, OUT_S_COMPL, OUT_S_CONSTR, OUT_S_DUAL, OUT_S_E0,
                             OUT_S_OBJ, OUT_SIZE, OUT_U_COMPL, OUT_U_CONSTR, OUT_U_DUAL)
from .kernels.slots import OPT_MAX_ITER
from . import deadline
from .options import option_vector, resolve
from .resume import records, resume_point, write_state
from .rows import unscaled_multipliers
from .structure import bound_signature
from .tape import Unsupported

#: kernel status code -> IPOPT status name (negative codes: ejected)
STATUS_NAMES = {0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level",
                2: "Diverging_Iterates", 3: "Maximum_Iterations_Exceeded",
                4: "User_Requested_Stop", 5: "Maximum_WallTime_Exceeded",
                6: "Maximum_CpuTime_Exceeded", 7: "Search_Direction_Becomes_Too_Small"}
STATUS_MAX_ITER = 3
STATUS_STOPPED = 4
#: the time budget of one compiled solve, in seconds of a typical core: the kernel checks
#: no clock, so a longer solve goes to the general path (which answers time limits) after
#: about this long -- see :func:`iteration_budget`.  (Ctrl-C is answered inside the
#: kernel, within an iteration: :func:`solve_checked`.)
TIME_BUDGET = 0.5
#: seconds per iteration = ITER_FIXED + ITER_PER_UNIT * (nnz(K) + nnz(L) + dim(K)): about
#: twice the compiled path's cost per unit measured on the 2-core VM (2026-12-04: Van der
#: Pol collocation N = 20 ... 400, 68-912 us per iteration at 3,339-67,559 units, 0.013 us
#: per unit; the three-link IK ~4 us per iteration), so that a slower core still ends its
#: budget in about TIME_BUDGET.  (The constants before, 10 us + 0.3 us per unit, were
#: measured on kernels 10-20x slower: the budget lasted 25-55 ms.)
ITER_FIXED = 5e-6
ITER_PER_UNIT = 0.03e-6

#: problem.structure_key (shared by a problem's twins) -> {bound signature: layout | None}
_layouts = weakref.WeakKeyDictionary()
#: (tape.model_digest, bound signature) -> layout | None, for problems of n + m up to
#: CONTENT_MAX_SIZE: the same model read again as another Problem (an Opti built per
#: solve) finds its layout; the CONTENT_ENTRIES most recently used are kept
_by_content: "collections.OrderedDict[tuple, object]" = collections.OrderedDict()
CONTENT_MAX_SIZE = 5_000
CONTENT_ENTRIES = 64
_layouts_lock = threading.Lock()


class _Buffers(threading.local):
    """Per thread and layout: the float workspace and a copy of the int array (its int
    scratch slots are written), so that threads never share written memory."""

    def __init__(self):
        self.by_layout = weakref.WeakKeyDictionary()


_buffers = _Buffers()


def layout_for(problem, lbx, ubx, lbg, ubg):
    """The :class:`.workspace_layout.WorkspaceLayout` of ``problem`` with this bound
    structure (built on first use, then reused -- also by the problem's twins, which
    share its structure, and by a small problem with the same tables, tapes and
    constants: :func:`.tape.model_digest`), or None if the tape cannot express the
    model or its KKT system is one the general path factorizes densely
    (:func:`caspar_backend.linsolve.qdldl.dense_kkt`: the kernels have QDLDL only, and
    the two paths run one algorithm)."""
    sig = bound_signature(lbx, ubx, lbg, ubg)
    with _layouts_lock:
        per = _layouts.setdefault(problem.structure_key, {})
        if sig in per:
            return per[sig]
    from ..linsolve.dense_kkt import dense_kkt
    from .tape import build_model, model_digest
    from .workspace_layout import WorkspaceLayout

    key = lay = None
    try:
        model = build_model(problem)
        if problem.n + problem.m <= CONTENT_MAX_SIZE:
            key = (model_digest(model, int(problem.n_params)), sig)
            with _layouts_lock:
                if key in _by_content:
                    _by_content.move_to_end(key)
                    return per.setdefault(sig, _by_content[key])
        lay = WorkspaceLayout(problem, lbx, ubx, lbg, ubg, model=model)
    except Unsupported:
        pass
    if lay is not None and dense_kkt(lay.sizes["nkkt"], lay.sizes["nnzK"]):
        lay = None
    with _layouts_lock:
        if key is not None:
            _by_content[key] = lay
            while len(_by_content) > CONTENT_ENTRIES:
                _by_content.popitem(last=False)
        return per.setdefault(sig, lay)


def iteration_budget(lay, seconds: float = TIME_BUDGET) -> int:
    """The iterations a compiled run of this layout may take in about ``seconds`` (a
    single solve: TIME_BUDGET) by the per-iteration cost model above (at least 50)."""
    sz = lay.sizes
    units = sz["nnzK"] + sz["nnzL"] + sz["nkkt"]
    return max(50, int(seconds / (ITER_FIXED + ITER_PER_UNIT * units)))


def _thread_buffers(lay):
    bufs = _buffers.by_layout.get(lay)
    if bufs is None:
        bufs = _buffers.by_layout[lay] = (lay.new_workspace(), lay.Ib.copy())
    return bufs


def _write_multipliers(problem, lay, Fb, mults) -> None:
    """Slots F_LAM_G0 and F_LAM_X0 of the thread's workspace from a warm start's
    ``(lam_g0, lam_x0)`` (checked as the general path checks them; missing: zeros)."""
    lam_g0, lam_x0 = (None, None) if mults is None else mults
    views = lay.float_views(Fb, ("LAM_G0", "LAM_X0"))
    views["LAM_G0"][:] = as_vector("lam_g0", lam_g0, problem.m, 0.0)
    views["LAM_X0"][:] = as_vector("lam_x0", lam_x0, problem.n, 0.0)


def solve_compiled(problem, x0=None, p=None, lbx=None, ubx=None, lbg=None, ubg=None,
                   **options):
    """Solve ``problem`` (a :class:`~caspar_backend.problem.Problem`) from ``x0`` with
    parameters ``p`` and bounds as ``Problem.solve`` takes them (None: the model's), or
    return None where the general path must solve (module docstring).  Options are
    ``Problem.solve``'s; an unknown name or a bad value raises OptionError, as there.
    Unlike ``Problem.solve`` this does not store ``p`` into the model.

    Returns a :class:`~caspar_backend.solver.result.SolveResult` as ``Problem.solve``'s:
    x, f, g (n, m float64 arrays), lam_g, lam_x in CasADi's convention, status,
    iterations, message, history, counts, final_errors; ``timings`` has ``setup`` (this
    call before the kernel), ``compiled`` (the kernel) and ``total`` only;
    ``extra['path'] = 'compiled'``.  The iteration log and summary, when print_level
    asks for them, are printed after the solve."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    problem._require_hessian("solve_compiled")
    opts, reason = resolve(options, clocked=True)
    if reason or problem.extended is not None:      # opaque calls: the general path's
        return None
    p = problem._param_vector(problem.p if p is None else p)
    x0 = as_vector("x0", problem.x0 if x0 is None else x0, problem.n)
    bounds = [problem.model.validated_bounds(name, v) for name, v in
              (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))]
    check_inputs(*bounds, x0, problem.var_names, problem.con_names)
    res = solve_checked(problem, x0, p, bounds, opts, t0, cpu0)
    if not isinstance(res, SolveResult):      # handed over (a resume point, or None)
        return None
    if problem.model.sense == -1:      # the model minimizes -f
        res = dataclasses.replace(res, f=-res.f)
    return res


def solve_checked(problem, x0, p, bounds, opts, t0, cpu0=None, start=None, mults=None):
    """:func:`solve_compiled` after the inputs were checked (as ``Problem.solve`` checks
    them): ``p`` (n_params,), ``x0`` (n,), ``bounds`` = [lbx, ubx, lbg, ubg] full
    vectors, ``opts`` validated :class:`~caspar_backend.solver.options.Options` that
    :func:`.options.resolve` accepts, ``t0`` the caller's start (perf_counter).  As
    ``solve_nlp``'s, the result's ``f`` is the minimized objective (``-f`` where the
    model maximizes f).  Where the kernel handed the solve over: the
    :class:`~caspar_backend.solver.resume.ResumePoint` the general path continues from
    (:mod:`.resume`); where that point is not resumable, the general path solves from
    the start: :data:`~caspar_backend.solver.resume.FRESH_START` from a first turn (it
    may hand the solve back), None from a later one.  None also where the kernels do not
    apply or evaluation errors are to be logged by name.  ``start``: a
    :class:`~caspar_backend.solver.resume.ResumePoint` a general path handed back (this
    very solve's state as an iteration began): the kernel goes on from there.
    ``mults``: a warm start's ``(lam_g0, lam_x0)`` as ``Problem.solve`` takes them (None
    or missing vectors: zeros, as the general path reads them)."""
    from .kernels.ipm import solve_instance

    # writeable contiguous copies: the one argument type the kernels are compiled for (a
    # read-only or strided array would be another Numba type, compiled again)
    x0, lbx, ubx, lbg, ubg = (np.array(v, np.float64) for v in (x0, *bounds))
    lay = layout_for(problem, lbx, ubx, lbg, ubg)
    if lay is None:
        return None
    Fb, Ib = _thread_buffers(lay)
    lay.p_of(Fb)[:] = p
    if opts.warm_start_init_point and start is None:
        _write_multipliers(problem, lay, Fb, mults)
    max_iter = int(opts.max_iter)
    first = 0 if start is None else start.iteration
    cap = min(max_iter, first + iteration_budget(lay))
    O = option_vector(opts)
    if cap < max_iter:
        O = O.copy()
        O[OPT_MAX_ITER] = cap
    hist = np.empty((cap + 1, HIST_COLUMNS))
    out = np.empty(OUT_SIZE)
    stop = lay.stop_of(Ib)
    t1 = time.perf_counter()
    # Ctrl-C: the first SIGINT sets the kernel's stop slot at once (solver/interrupt.py),
    # and the kernel ends with User_Requested_Stop where the general path would, within
    # an iteration.  A stop with no SIGINT of this solve's was a late one of the previous
    # solve's (interrupt.py): this solve runs again, unchanged (at most once: a second
    # stop needs a SIGINT during this block).  A SIGINT the kernel did not read (it ended,
    # or ejected, first): stops_here.  Time limits: a thread sets the slot when one
    # passes (.deadline), and the kernel ends as the general path's clocks would end it
    stop[0] = 0
    watch = deadline.watch(stop, t0, time.process_time() if cpu0 is None else cpu0,
                           opts.max_wall_time, opts.max_cpu_time)
    try:
        for _ in range(2):
            ctrl_c = SimpleNamespace(interrupted=False)
            if start is not None:
                write_state(lay, Fb, start)
            with sigint_as_stop(ctrl_c, stop):
                code, iterations, f = solve_instance(Fb, lay.FO, Ib, lay.IO, O, x0, lbx,
                                                     ubx, lbg, ubg, hist, out)
            if code != STATUS_STOPPED or ctrl_c.interrupted:
                break
            if stop[0] == 1:            # (a time limit's value stays)
                stop[0] = 0
    finally:
        deadline.unwatch(watch)
    t2 = time.perf_counter()
    iterations = int(iterations)
    if ctrl_c.interrupted and stops_here(code, f):
        status = "User_Requested_Stop"
    elif out[OUT_N_INVALID] > 0 and (opts.print_level > 0 or opts.output_file):
        return None                 # the general path logs each evaluation error by name
    elif code < 0 or (code == STATUS_MAX_ITER and iterations < max_iter):
        # handed over, or past its time budget: the general path goes on from the start
        # of this iteration where it can (.resume), else solves from the start -- and
        # from a first turn, may hand the solve back (FRESH_START: the same iterates; a
        # later turn's general path does not, so the turns end).  A Ctrl-C while the
        # point is built (a history of thousands of iterations: milliseconds) is one of
        # the kernel's turn, answered as one the kernel read too late (stops_here), not
        # a KeyboardInterrupt between the two sides' blocks
        late = SimpleNamespace(interrupted=False)
        kept = None if start is None else len(start.history)
        with sigint_as_stop(late):
            point = resume_point(lay, Fb, hist, start)
        if not (late.interrupted and stops_here(code, f)):
            if point is None and start is None:
                from ..solver.resume import FRESH_START

                return FRESH_START
            return point
        if kept is not None:
            del start.history[kept:]        # (the point's records: the result's below)
        status = "User_Requested_Stop"
    else:
        status = STATUS_NAMES[int(code)]
    x, g, lam_g, lam_x = _unscaled_point(lay, Fb)
    f = float(f)
    # (tolist: Python floats at once, not one NumPy scalar conversion per value)
    history = [] if start is None else start.history      # (the solve's list, extended)
    history.extend(records(hist, first, iterations + 1))
    counts = {key: int(out[k]) for k, key in enumerate(COUNT_KEYS, start=OUT_N_OBJ)}
    uf = f                          # the log's unscaled objective: the minimized one
    bound = bound_violation(x, lbx, ubx)
    scaled = dict(obj=float(out[OUT_S_OBJ]), dual=float(out[OUT_S_DUAL]),
                  constr=float(out[OUT_S_CONSTR]), bound=bound, compl=float(out[OUT_S_COMPL]),
                  E0=float(out[OUT_S_E0]))
    ud, uc, ucp = float(out[OUT_U_DUAL]), float(out[OUT_U_CONSTR]), float(out[OUT_U_COMPL])
    unscaled = dict(obj=uf, dual=ud, constr=uc, bound=bound, compl=ucp, E0=max(ud, uc, ucp))
    total = time.perf_counter() - t0
    res = SolveResult(x=x, f=f, g=g, lam_g=lam_g, lam_x=lam_x, status=status,
                      iterations=iterations,
                      message=STATUSES[status].exit_message
                      + (" (interrupted while the compiled kernel ran)"
                         if ctrl_c.interrupted and code != STATUS_STOPPED else ""),
                      timings=dict(setup=t1 - t0, compiled=t2 - t1, total=total),
                      counts=counts, history=history,
                      final_errors=dict(scaled=scaled, unscaled=unscaled),
                      extra=dict(path="compiled", device="cpu", linear_solver="qdldl",
                                 kkt_system="augmented", analysis_seconds=0.0))
    _print(res, opts, scaled, unscaled, problem, (lbx, ubx, lbg, ubg), start)
    return res


def stops_here(code, f) -> bool:
    """Whether a Ctrl-C of this solve that came while the kernel ran ends the solve at the
    kernel's last iterate (User_Requested_Stop, its log line's iterate and statistics,
    ``iterations`` = that line's number), given the kernel's ``(code, f)``.

    Rule: the answer is the general path's (solver/ipm.py reads the request after each
    iteration's log line), at the point the kernel reached, with no restart -- a restart
    from x0 would answer with the starting point, or not at all within 100 ms.

    * The kernel ended (``code >= 0``): at the request, or on its own before it read
      it (converged, past its time budget, ...) -- yes, as the general path's read
      comes before its termination tests.
    * It ejected inside an iteration (``code < 0``, ``f`` finite): the workspace holds
      the iterate of its last log line (each ejection leaves the iteration before the
      step is accepted) -- yes.  That is where IPOPT stops: the current iterate; the
      general path would enter the iteration's other branch (restoration, the pivoting
      switch, ...) and stop at the next log line, a point the kernel cannot compute.
    * Except an invalid derivative (code -2, EJECT_REASONS[2]: the Hessian of that
      iterate, or the derivatives at the point just accepted, which has then replaced
      it): the general path ends there with Invalid_Number_Detected before it reads
      the request again, so the solve goes to it, as without a signal.
    * It ejected before its first iteration (``f`` NaN: an invalid number at the
      starting point, too few degrees of freedom): no iterate yet; the general path
      ends at the same place, before its first read, with its own status -- no."""
    return code >= 0 or (code != -2 and bool(np.isfinite(f)))


def _print(res, opts, scaled, unscaled, problem, bounds, start=None):
    """The general path's output (driver.solve_nlp), after the solve: the user's options,
    the problem's statistics, the iteration log, the summary; where an earlier general
    turn of the solve started the log (``start.log``, a handed-back solve), its lines
    from ``start.logged`` on and the summary."""
    if start is not None and start.log is not None:
        log = start.log
        for rec in res.history[start.logged:]:
            log.iteration(rec)
        summary(log.stream, res, scaled, unscaled, res.counts, res.timings,
                STATUSES[res.status].exit_message, False, rows=row_kinds(*bounds[2:]),
                scaling=scaling_evaluations(opts, len(bounds[2])))
        return
    stream, out_file = open_output(opts, opts.stream if opts.stream is not None
                                   else sys.stdout)
    if stream is None:
        return
    try:
        user_options(stream, opts)
        if opts.print_level >= 3:
            lay = Layout.of(problem)
            stream.write(problem_statistics(opts.print_level, "qdldl",
                                            (lay.jac_rows, lay.jac_cols),
                                            (lay.hess_rows, lay.hess_cols), *bounds))
        log = IterationLog(stream, opts.print_frequency_iter)
        for rec in res.history:
            log.iteration(rec)
        summary(stream, res, scaled, unscaled, res.counts, res.timings,
                STATUSES[res.status].exit_message, False, rows=row_kinds(*bounds[2:]),
                scaling=scaling_evaluations(opts, len(bounds[2])))
    finally:
        if out_file is not None:
            out_file.close()


def load_single() -> float:
    """Load from the cache the kernels a single solve calls (the KKT pattern's
    elimination tree and update schedule, :func:`.kernels.ipm.solve_instance`) when
    :func:`.cache.is_ready` says the cache is complete -- or compile them (Numba's
    ``compile`` of a signature does either); the batch's row loops
    (:mod:`.kernels.solve_many`) load on their first call.  A process's first compiled
    solve waits for this (~0.4 s on the 2-core VM, most of it Numba's start-up; the row
    loops would add ~0.1 s).  Returns the seconds it took."""
    from numba import types

    from .kernels.ipm import solve_instance
    from .kernels.qdldl import elimination_tree, ldl_schedule

    t0 = time.perf_counter()
    f1, i1, f2 = types.float64[::1], types.int64[::1], types.float64[:, ::1]
    elimination_tree.compile((types.int64, i1, i1, i1, i1, i1))
    ldl_schedule.compile((types.int64,) + (i1,) * 12)
    solve_instance.compile((f1, i1, i1, i1, f1, f1, f1, f1, f1, f1, f2, f1))
    return time.perf_counter() - t0


def warmup():
    """Compile the kernels for the argument types :func:`solve_compiled`, the batch
    pass and the general path's tape evaluator and factorizations use (:func:`load_single`'s,
    the row loops, the evaluation and factorization entry points, the lockstep batch's
    Bunch-Kaufman), or load them from the cache (about a
    minute of CPU the first time on a machine, well under a second after), and record in
    the cache that they are complete (:func:`.cache.mark_ready`).  Returns the seconds it
    took."""
    from numba import types

    from .cache import mark_ready
    from .kernels.solve_many import solve_rows, solve_rows_shared
    from .kernels.bunch_kaufman import bk_factor, bk_factor_rows, bk_solve, bk_solve_rows
    from .kernels.qdldl import ldl_factor, ldl_solve
    from .kernels.tape_eval import ev_first, ev_hess, ev_zeroth

    t0 = time.perf_counter()
    load_single()
    f1, i1, f2 = types.float64[::1], types.int64[::1], types.float64[:, ::1]
    i2 = types.int64[:, ::1]
    # the batch's row loops (batch_cpu.solve_group, thread_workspaces): Fb0, FO, Ib0, IO,
    # Fbuf, Ibuf, ready, put, In, keep, Kept, O, X0, LBX, UBX, LBG, UBG, Hist, Outs, code,
    # iters, fval
    rows = (f1, i1, i1, i1, f2, i2, i1, i1, f2, i1, f2, f1, f2, f2, f2, f2, f2, f2, f2, i1,
            i1, f1)
    solve_rows.compile(rows)
    solve_rows_shared.compile((i1, types.int64) + rows)
    # the general path's tape evaluator (.tape_evaluator): Fb, FO, Ib, IO, outputs
    ev_zeroth.compile((f1, i1, i1, i1, f1))
    ev_first.compile((f1, i1, i1, i1, f1, f1))
    ev_hess.compile((f1, i1, i1, i1, f1, types.float64, f1))
    # the general path's QDLDL (.ldl): Fb, FO, Ib, IO, values / b, x
    ldl_factor.compile((f1, i1, i1, i1, f1))
    ldl_solve.compile((f1, i1, i1, i1, f1, f1))
    # its small K's Bunch-Kaufman, and the lockstep batch's (batch/ldl.py): BK_MAP,
    # values, A, piv, mass, active, counts / A, piv, rhs, out
    bk_factor.compile((f1, i1, i1, i1, f1))
    bk_solve.compile((f1, i1, i1, i1, f1, f1))
    bk_factor_rows.compile((i1, f2, f2, f2, f2, i1, i2))
    bk_solve_rows.compile((f2, f2, f2, f2))
    mark_ready()
    return time.perf_counter() - t0


def _unscaled_point(lay, Fb):
    """(x, g, lam_g, lam_x) from the workspace after a solve, as solver/nlp.py
    ``SlackNLP.unscale``: lam_g = y d_c / d_f; lam_x = (z_U - z_L)[:nx] / d_f at the free
    variables (z_L, z_U on the finite lower/upper bounds of w), the kernel's slot
    F_LAM_X_FIXED (minus the reduced gradient) at the fixed ones."""
    v = lay.float_views(Fb)
    lam_g, lam_x = unscaled_multipliers(lay, v["OBJ_SCALE"][0], v["Y"], v["CON_SCALE"],
                                        v["ZL"], v["ZU"], v["LAM_X_FIXED"])
    return v["X"].copy(), v["G"].copy(), lam_g, lam_x
