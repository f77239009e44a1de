"""The CPU kernels rebuilt from the CUDA build's source form -- every kernel's code through
:func:`caspar_backend.compiled.cuda.loops.while_code` (while loops, and with
``CASPAR_CUDA_BATCHED_LOADS=1`` the batched loads), njit-compiled with the kernels' flags,
their calls rebound to each other as :mod:`caspar_backend.compiled.cuda.retarget` rebinds
the CUDA versions -- so that a rewrite of the CUDA build's source is checked on the CPU
against the CPU kernels, bit for bit, on whole batches (about two minutes of compile)."""
from __future__ import annotations

import importlib
import pkgutil
from types import FunctionType

import numpy as np


def transformed_solve_rows():
    """``solve_many.solve_rows`` built from the rewritten source of every kernel."""
    from numba import njit
    from numba.core.dispatcher import Dispatcher

    from caspar_backend.compiled import kernels
    from caspar_backend.compiled.cuda.loops import while_code
    from caspar_backend.compiled.kernels import _jit

    mods = [importlib.import_module(f"{kernels.__name__}.{m.name}")
            for m in pkgutil.iter_modules(kernels.__path__)]
    G = {m.__name__: dict(vars(m)) for m in mods}
    new = {}
    for m in mods:
        if m.__name__ == _jit.__name__:
            continue                    # the slot accessors serve both builds
        for v in vars(m).values():
            if isinstance(v, Dispatcher) and v.py_func.__module__ == m.__name__:
                f = v.py_func
                fn = FunctionType(while_code(f), G[m.__name__], f.__name__, f.__defaults__,
                                  f.__closure__)
                opts = dict(nogil=True, _nrt=False, error_model="numpy")
                for k in ("inline", "parallel"):
                    if v.targetoptions.get(k):
                        opts[k] = v.targetoptions[k]
                new[id(v)] = njit(**opts)(fn)
    for g in G.values():
        for k, v in list(g.items()):
            if id(v) in new:
                g[k] = new[id(v)]
    return G[f"{kernels.__name__}.solve_many"]["solve_rows"]


def solve_both(problem, sub, options, solve_rows_t):
    """(kernel results, transformed results): ``(code, iters, fval, Fall)`` of the CPU
    kernels' ``solve_rows`` and of ``solve_rows_t`` on fresh workspaces of ``sub``."""
    from caspar_backend.compiled.cuda.group import group_layout
    from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
    from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
    from caspar_backend.compiled.kernels.solve_many import solve_rows
    from caspar_backend.compiled.options import option_vector, resolve

    lay = group_layout(problem, sub)
    opts, _ = resolve({**options, "print_level": 0})
    out = []
    for fn in (solve_rows, solve_rows_t):
        ws = DeviceWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, xp=np,
                              lam_g0=sub.lam_g0, lam_x0=sub.lam_x0)
        B = ws.B
        code, iters, fval = np.zeros(B, np.int64), np.zeros(B, np.int64), np.zeros(B)
        fn(ws.Fall, ws.FO, ws.Iall, ws.IO, option_vector(opts), ws.X0, ws.LBX, ws.UBX,
           ws.LBG, ws.UBG, np.empty((0, HIST_COLUMNS)), np.empty((B, OUT_SIZE)), code, iters,
           fval)
        out.append((code, iters, fval, ws.Fall.copy()))
    return out
