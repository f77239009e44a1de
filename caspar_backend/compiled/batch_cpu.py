"""The CPU path of ``solve_batch``: one structure group of instances solved by the
compiled kernel in one call (:func:`.kernels.solve_many.solve_rows`: a loop over the
instances, no Python per instance), each instance on its own workspace row as on the
GPU (:class:`.cuda.workspaces.DeviceWorkspaces` with NumPy arrays).

Each finished instance is its own single solve's compiled run: the same status,
iterations, x and f bit for bit as ``Problem.solve`` (whose small CPU solves take the
same kernel); instances with ``code < 0`` are re-solved by the caller.
"""
from __future__ import annotations

import numpy as np

from .kernels.record import HIST_COLUMNS, OUT_SIZE
from .rows import KernelResult, result_rows


#: most instances per kernel call: between calls a Ctrl-C is seen (the kernel cannot be
#: interrupted)
CHUNK = 64
#: iterations an instance is expected to need: a call takes as many instances as the time
#: budget holds at this count (the cost model of solve.iteration_budget)
TYPICAL_ITERATIONS = 50


def chunking(budget: int, max_iter: int) -> tuple:
    """(instances per call, iteration cap per instance) for a layout whose single solve
    may take ``budget`` iterations (:func:`.solve.iteration_budget`, about
    solve.TIME_BUDGET seconds): k = clamp(budget // TYPICAL_ITERATIONS, 1, CHUNK)
    instances per call, each capped at min(max_iter, budget // k) iterations -- so that a
    call lasts about the time budget, and an instance needing more than its share is
    solved by its own solve (as one over its budget is in ``Problem.solve``)."""
    k = max(1, min(CHUNK, budget // TYPICAL_ITERATIONS))
    return k, min(max_iter, max(1, budget // k))


def solve_group(problem, options, sub, stopped=lambda: False) -> KernelResult:
    """Solve the instances of ``sub`` (a :class:`~caspar_backend.batch.inputs.BatchInputs`
    of one structure group; :func:`.cuda.group.kernel_reason` with ``cuda=False`` must
    be '') on the CPU, :func:`chunking`'s number of instances per kernel call.  An instance
    that would need more than its share of the time budget, or that ``stopped()`` (asked
    between calls) left unsolved, gets a negative code: the caller solves it by its own
    solve."""
    from .cuda.group import group_layout
    from .cuda.workspaces import DeviceWorkspaces
    from .kernels.slots import OPT_MAX_ITER
    from .kernels.solve_many import solve_rows
    from .options import option_vector, resolve
    from .solve import STATUS_MAX_ITER, iteration_budget

    opts, _ = resolve({**options, "print_level": 0})
    lay = group_layout(problem, sub)
    ws = DeviceWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, xp=np)
    B = ws.B
    max_iter = int(opts.max_iter)
    k, cap = chunking(iteration_budget(lay), max_iter)
    O = option_vector(opts).copy()
    O[OPT_MAX_ITER] = cap
    code, iters, fval = np.full(B, -99, np.int64), np.zeros(B, np.int64), np.zeros(B)
    hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((k, OUT_SIZE))
    for a in range(0, B, k):
        if stopped():
            break
        r = slice(a, min(a + k, B))
        solve_rows(ws.Fall[r], ws.FO, ws.Iall[r], ws.IO, O, ws.X0[r], ws.LBX[r], ws.UBX[r],
                   ws.LBG[r], ws.UBG[r], hist, outs, code[r], iters[r], fval[r])
    capped = (code == STATUS_MAX_ITER) & (iters < max_iter)
    code[capped] = -99
    return result_rows(ws, code, iters, fval)
