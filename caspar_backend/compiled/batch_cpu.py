"""The CPU path of ``solve_batch``: one structure group of instances solved by the
compiled kernel (:func:`.kernels.solve_many.solve_rows`: a loop over the instances, no
Python per instance), each instance on its thread's workspace, refilled from the template
per instance (:class:`.thread_workspaces.ThreadWorkspaces`: a batch holds a workspace per
thread, not per instance).

Threads: the instances are cut into calls (:func:`chunking`), run one after the other by
the calling thread; a call of more than MIN_CALL instances spreads them over ``threads``
of Numba's native threads, each taking the next instance as it finishes one
(:func:`.kernels.solve_many.solve_rows_shared`; default one per core this process may run
on, :func:`usable_cores`).  The GIL is released for the
whole call and no Python thread is woken to start one -- under a busy interpreter (a
service's client threads) each such wake-up waited up to the switch interval.  The
threading layer's rules are kept (:func:`_threads_for`): a child forked after GNU OpenMP
started solves on its calling thread (OpenMP would terminate it), and the 'workqueue'
layer, which admits one parallel call at a time, gets its calls in turn.
An instance's answer does not depend on which call or thread solved it.

Each finished instance is its own single solve's compiled run: the same status,
iterations, x and f bit for bit as ``Problem.solve`` (whose small CPU solves take the
same kernel); instances with ``code < 0`` are re-solved by the caller.
"""
from __future__ import annotations

import contextlib
import os
import threading
import time

import numpy as np

from . import deadline
from .cores import threading_layer, usable_cores
from .cuda.group import group_layout
from .kernels.record import HIST_COLUMNS, OUT_SIZE
from .kernels.slots import OPT_MAX_ITER
from .options import option_vector, resolve
from .rows import KernelResult, result_rows
from .solve import STATUS_MAX_ITER, iteration_budget
from .thread_workspaces import ThreadWorkspaces


#: most instances per kernel call and thread: between calls a Ctrl-C is seen (the batch's
#: calls leave the kernel's stop slot alone -- a set slot would end every later instance
#: of the call at its first iteration -- so a call runs to its end, within
#: SHARES_PER_CALL time budgets)
CHUNK = 64
#: most instances solved on the calling thread alone: below this a batch is not worth the
#: threads' start (a parallel region's fork and join)
MIN_CALL = 4
#: time budgets one parallel call may last (:func:`per_thread`)
SHARES_PER_CALL = 4
#: a call's time budget in seconds, by the cost model of :func:`.solve.iteration_budget`:
#: a call runs to its end (above), so this bounds how long a Ctrl-C waits -- at most
#: SHARES_PER_CALL of it, about 0.2 s -- and an instance needing more than its share of
#: it is solved by its own solve
CALL_SECONDS = 0.05
#: iterations an instance is expected to need: a call takes as many instances as the time
#: budget holds at this count (the cost model of solve.iteration_budget)
TYPICAL_ITERATIONS = 50

#: the process that first ran a parallel call (None: none yet); a child forked after that
#: inherits an OpenMP runtime it must not use
_parallel_pid: int | None = None
#: calls in turn where the threading layer takes one parallel call at a time (or is not
#: chosen yet: the first parallel call chooses it)
_workqueue_lock = threading.Lock()


def _forked_from_openmp() -> bool:
    """Whether this process is a child forked after its parent's OpenMP layer started
    (GNU OpenMP's threads do not survive a fork; Numba ends such a child with SIGTERM
    at its first parallel call)."""
    return (_parallel_pid is not None and _parallel_pid != os.getpid()
            and threading_layer() == "omp")


def _thread_ids(threads: int) -> int:
    """Workspaces a batch on ``threads`` threads needs: one for the calling thread alone,
    else one per Numba thread id (:func:`numba.get_thread_id` counts the whole pool)."""
    import numba

    return 1 if threads == 1 else max(threads, numba.config.NUMBA_NUM_THREADS)


def _threads_for(threads: int, n: int) -> int:
    """The threads a call of ``n`` instances runs on, asked ``threads``: 1 (the calling
    thread, :func:`.kernels.solve_many.solve_rows`) for n <= MIN_CALL or in a child
    forked after OpenMP started; else min(threads, n, Numba's thread count)."""
    import numba

    if threads <= 1 or n <= MIN_CALL or _forked_from_openmp():
        return 1
    return min(threads, n, numba.config.NUMBA_NUM_THREADS)


@contextlib.contextmanager
def _kernel_on(threads: int):
    """A parallel call's context: ``threads`` of Numba's threads for this calling thread
    (Numba's setting is per thread; restored after), one loop index per chunk (the
    kernel's loop runs once per thread and hands the instances out itself), the
    'workqueue' layer's calls in turn."""
    global _parallel_pid
    import numba

    serial = threading_layer() in (None, "workqueue")
    lock = _workqueue_lock if serial else contextlib.nullcontext()
    before = numba.get_num_threads()
    with lock:
        numba.set_num_threads(threads)
        try:
            with numba.parallel_chunksize(1):
                yield
        finally:
            numba.set_num_threads(before)
            if _parallel_pid is None:
                _parallel_pid = os.getpid()


def chunking(budget: int, max_iter: int) -> tuple:
    """(instances per call, iteration cap per instance) for a layout whose single solve
    may take ``budget`` iterations in a call (:func:`.solve.iteration_budget` of
    CALL_SECONDS): k = clamp(budget // TYPICAL_ITERATIONS, 1, CHUNK)
    instances per call, each capped at min(max_iter, budget // k) iterations -- so that a
    call lasts about the time budget, and an instance needing more than its share is
    solved by its own solve (as one over its budget is in ``Problem.solve``)."""
    k = max(1, min(CHUNK, budget // TYPICAL_ITERATIONS))
    return k, min(max_iter, max(1, budget // k))


def per_thread(k: int) -> int:
    """Instances per thread in one parallel call, for :func:`chunking`'s k per call:
    min(CHUNK, SHARES_PER_CALL k).  A parallel call ends when its slowest thread does, and
    instances differ in iterations (Van der Pol: 7 to 16), so a thread needs several
    instances per call for the others' wait at its end to be small (with k = 2 per thread
    a batch of 1,000 ran 27 % slower on 16 cores than calls handed to threads one by one);
    a call then lasts up to SHARES_PER_CALL time budgets by the cost model, the longest a
    Ctrl-C waits to be seen."""
    return min(CHUNK, SHARES_PER_CALL * k)


def solve_group(problem, options, sub, stopped=lambda: False,
                threads: int | None = None, plan=None, started=None) -> KernelResult:
    """Solve the instances of ``sub`` (a :class:`~caspar_backend.batch.inputs.BatchInputs`
    of one structure group; :func:`.cuda.group.kernel_reason` with ``cuda=False`` must
    be '', ``plan`` its :func:`.cuda.group.kernel_plan` or None) on the CPU: kernel
    calls of :func:`per_thread` instances per thread, on ``threads`` threads
    (None: :func:`usable_cores`; :func:`_threads_for`); each instance's iteration cap is
    :func:`chunking`'s, whatever the threads.  An instance that would need more than its
    share of the time budget, or whose call had not started when ``stopped()`` became
    true, gets a negative code: the caller solves it by its own solve.  Time limits
    count from ``started`` = (perf_counter, process_time) of the batch's start (None:
    now) for the whole group, as the lockstep path counts them: when one passes, every
    instance's stop slot is set (:mod:`.deadline`) and each ends at its next
    termination test, those of later calls at their first."""
    from .kernels.solve_many import solve_rows, solve_rows_shared  # (Numba: on first use)

    if plan is None:
        opts, lay = resolve({**options, "print_level": 0})[0], group_layout(problem, sub)
    else:
        opts, lay = plan.opts, plan.layout
    B = sub.x0.shape[0]
    max_iter = int(opts.max_iter)
    k, cap = chunking(iteration_budget(lay, CALL_SECONDS), max_iter)
    O = option_vector(opts).copy()
    O[OPT_MAX_ITER] = cap
    code, iters, fval = np.full(B, -99, np.int64), np.zeros(B, np.int64), np.zeros(B)
    hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((B, OUT_SIZE))
    T = _threads_for(usable_cores() if threads is None else max(1, int(threads)), B)
    ws = ThreadWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg,
                          _thread_ids(T), lam_g0=sub.lam_g0, lam_x0=sub.lam_x0)
    step = k if T == 1 else per_thread(k) * T    # one thread: no slowest thread to wait for
    t0, cpu0 = started if started is not None else (time.perf_counter(), time.process_time())
    watch = deadline.watch(ws.stop_slots(), t0, cpu0, opts.max_wall_time,
                           opts.max_cpu_time)
    try:
        for a in range(0, B, step):
            if stopped():                  # Ctrl-C: no call starts any more
                break
            r = slice(a, min(a + step, B))
            args = ws.args(r, O, hist, outs[r], code[r], iters[r], fval[r])
            if T == 1 or r.stop - r.start <= MIN_CALL:
                solve_rows(*args)
            else:
                n = min(T, r.stop - r.start)
                with _kernel_on(n):
                    solve_rows_shared(np.zeros(1, np.int64), n, *args)
    finally:
        deadline.unwatch(watch)
    capped = (code == STATUS_MAX_ITER) & (iters < max_iter)
    code[capped] = -99
    return result_rows(ws, code, iters, fval)
