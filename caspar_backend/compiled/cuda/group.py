"""The GPU path of ``solve_batch``: one structure group of instances solved by the CUDA
kernel (one thread per instance, :mod:`.launch`).

:func:`kernel_reason` says whether the kernel applies to a group ('' if it does);
:func:`solve_group` runs it and returns a :class:`..rows.KernelResult` whose instances
with ``code < 0`` the caller re-solves on the general path (``solve_batch`` solves them
by their own ``Problem.solve``).  Each finished instance equals its own single solve:
same status, same iterations, objective to rounding (libdevice and FMA contraction,
:mod:`.retarget`).
"""
from __future__ import annotations

import numpy as np

from ..options import resolve as _resolve_options
from ..solve import layout_for


def kernel_reason(problem, options, sub, cuda: bool = True) -> str:
    """'' if the kernel can solve the instances ``sub`` (a
    :class:`~caspar_backend.batch.inputs.BatchInputs` of one structure group) with
    ``options`` (``Problem.solve``'s, ``device`` removed) -- on the GPU, or with
    ``cuda=False`` on the CPU --, else why not.  The batch prints no log, so
    ``print_level`` is not a reason."""
    import importlib.util

    if cuda and (importlib.util.find_spec("numba") is None
                 or importlib.util.find_spec("numba_cuda") is None):
        return "numba and numba-cuda are not both installed"
    if not cuda:
        from ..dispatch import kernels_ready

        if importlib.util.find_spec("numba") is None or not kernels_ready(wait=False):
            return "the compiled kernels are not ready (caspar warmup)"
    _, why = _resolve_options({**options, "print_level": 0})
    if why:
        return why
    if np.any(sub.lbx == sub.ubx):
        return "fixed variables"
    if group_layout(problem, sub) is None:
        return "an expression the compiled tape cannot express"
    return ""


def group_layout(problem, sub):
    """The layout of the structure group ``sub`` (its first instance's bounds: all share
    the structure), or None (:func:`caspar_backend.compiled.solve.layout_for`)."""
    return layout_for(problem, *(np.array(a[0], np.float64)
                                 for a in (sub.lbx, sub.ubx, sub.lbg, sub.ubg)))


def solve_group(problem, options, sub):
    """Solve the instances of ``sub`` on the GPU (:func:`kernel_reason` must be '')."""
    from ..options import option_vector
    from .launch import COLUMNS, solve_on_device
    from .workspaces import DeviceWorkspaces

    opts, _ = _resolve_options({**options, "print_level": 0})
    ws = DeviceWorkspaces(group_layout(problem, sub), sub.x0, sub.p, sub.lbx, sub.ubx,
                          sub.lbg, sub.ubg, interleaved=COLUMNS)
    return solve_on_device(ws, option_vector(opts))
