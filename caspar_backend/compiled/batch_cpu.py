"""The CPU path of ``solve_batch``: one structure group of instances solved by the
compiled kernel (:func:`.kernels.solve_many.solve_rows`: a loop over the instances, no
Python per instance), each instance on its own workspace row as on the GPU
(:class:`.cuda.workspaces.DeviceWorkspaces` with NumPy arrays).

Threads: the instances are cut into calls (:func:`chunking`), the first run by the
calling thread and the others on a pool of ``threads`` threads (default: one per core
this process may run on, :func:`usable_cores`); the kernel releases the GIL, so the calls
run on separate cores.
An instance's answer does not depend on which call or thread solved it.

Each finished instance is its own single solve's compiled run: the same status,
iterations, x and f bit for bit as ``Problem.solve`` (whose small CPU solves take the
same kernel); instances with ``code < 0`` are re-solved by the caller.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .cuda.group import group_layout
from .cuda.workspaces import DeviceWorkspaces
from .kernels.record import HIST_COLUMNS, OUT_SIZE
from .kernels.slots import OPT_MAX_ITER
from .options import option_vector, resolve
from .rows import KernelResult, result_rows
from .solve import STATUS_MAX_ITER, iteration_budget


#: most instances per kernel call: between calls a Ctrl-C is seen (the batch's calls leave
#: the kernel's stop slot alone -- a set slot would end every later instance of the call
#: at its first iteration -- so a call runs to its end, within the time budget)
CHUNK = 64
#: fewest instances per call when a batch is spread over threads: a thread hand-off
#: (a pool thread taking the GIL to start its call) must not cost more than the call
MIN_CALL = 4
#: iterations an instance is expected to need: a call takes as many instances as the time
#: budget holds at this count (the cost model of solve.iteration_budget)
TYPICAL_ITERATIONS = 50


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _kernel_pool() -> ThreadPoolExecutor:
    """The process's pool of kernel threads (:func:`usable_cores` of them), made on
    first use; calls of every batch (and of every service worker) share it."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(usable_cores(), thread_name_prefix="caspar-kernel")
        return _pool


def chunking(budget: int, max_iter: int) -> tuple:
    """(instances per call, iteration cap per instance) for a layout whose single solve
    may take ``budget`` iterations (:func:`.solve.iteration_budget`, about
    solve.TIME_BUDGET seconds): k = clamp(budget // TYPICAL_ITERATIONS, 1, CHUNK)
    instances per call, each capped at min(max_iter, budget // k) iterations -- so that a
    call lasts about the time budget, and an instance needing more than its share is
    solved by its own solve (as one over its budget is in ``Problem.solve``)."""
    k = max(1, min(CHUNK, budget // TYPICAL_ITERATIONS))
    return k, min(max_iter, max(1, budget // k))


def solve_group(problem, options, sub, stopped=lambda: False,
                threads: int | None = None, plan=None) -> KernelResult:
    """Solve the instances of ``sub`` (a :class:`~caspar_backend.batch.inputs.BatchInputs`
    of one structure group; :func:`.cuda.group.kernel_reason` with ``cuda=False`` must
    be '', ``plan`` its :func:`.cuda.group.kernel_plan` or None) on the CPU: kernel
    calls of at most :func:`chunking`'s number of instances,
    fewer (down to MIN_CALL) where that gives each of ``threads`` threads (None:
    :func:`usable_cores`) a call; each instance's iteration cap is :func:`chunking`'s,
    whatever the threads.  An instance that would need more than its share of the time
    budget, or whose call had not started when ``stopped()`` became true, gets a
    negative code: the caller solves it by its own solve."""
    from .kernels.solve_many import solve_rows     # (Numba: imported on first use)

    if plan is None:
        opts, lay = resolve({**options, "print_level": 0})[0], group_layout(problem, sub)
    else:
        opts, lay = plan.opts, plan.layout
    ws = DeviceWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, xp=np)
    B = ws.B
    max_iter = int(opts.max_iter)
    k, cap = chunking(iteration_budget(lay), max_iter)
    O = option_vector(opts).copy()
    O[OPT_MAX_ITER] = cap
    code, iters, fval = np.full(B, -99, np.int64), np.zeros(B, np.int64), np.zeros(B)
    hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((B, OUT_SIZE))
    threads = usable_cores() if threads is None else max(1, int(threads))
    k = min(k, max(MIN_CALL, -(-B // threads)))
    abandon = []        # non-empty: no call starts any more

    def call(r: slice) -> None:
        if abandon or stopped():
            return
        solve_rows(ws.Fall[r], ws.FO, ws.Iall[r], ws.IO, O, ws.X0[r], ws.LBX[r], ws.UBX[r],
                   ws.LBG[r], ws.UBG[r], hist, outs[r], code[r], iters[r], fval[r])

    calls = [slice(a, min(a + k, B)) for a in range(0, B, k)]
    if threads == 1 or len(calls) == 1:
        for r in calls:
            call(r)
    else:
        # the first call runs in this thread, which would otherwise only wait: one
        # thread hand-off fewer per batch (a pool thread must take the GIL to start a
        # call, which under a busy interpreter -- a service's client threads -- takes
        # up to the switch interval)
        futures = [_kernel_pool().submit(call, r) for r in calls[1:]]
        try:
            call(calls[0])
            for fut in futures:
                fut.result()
        except BaseException:
            # a second Ctrl-C: no call starts any more (those running end on their own,
            # within the time budget); the caller sees the KeyboardInterrupt
            abandon.append(True)
            raise
    capped = (code == STATUS_MAX_ITER) & (iters < max_iter)
    code[capped] = -99
    return result_rows(ws, code, iters, fval)
