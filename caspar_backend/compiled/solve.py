"""``solve_compiled``: one solve of a compiled problem by the compiled interior point, or
``None`` where the general path (``Problem.solve``) must solve instead.

The compiled path runs caspar's interior point (the lockstep batch path with B = 1)
through the Numba kernels of :mod:`.kernels`: the same iterates as ``Problem.solve`` --
status and iterations equal, x and f bit for bit where the model uses no
exp/log10/tanh/pow (NumPy's SIMD versions of these differ from libm by 1-3 ulp on a few
percent of arguments; with them the agreement is to rounding).  It returns ``None``,
having changed nothing the caller sees, when

* an option is not implemented (:mod:`.options`), or the model has an expression the
  tape cannot express (:class:`.tape.Unsupported`) or fixed variables (lbx == ubx);
* the solve reaches a path the kernels do not implement (restoration, the pivoting
  switch, the refinement fall-back, a full filter, ...: batch/state.py's ejection
  reasons).  The caller then solves from the start on the general path, as
  ``solve_batch`` does with an ejected instance.

Cost: the kernels compile once per machine (about a minute of CPU; cached under
``$CASPAR_CACHE_DIR/numba``, see :mod:`.kernels._jit`); a layout is built once per
problem and bound structure; a solve allocates only its result arrays.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..model import as_vector, check_inputs
from ..solver.result import SolveResult
from ..solver.status import STATUSES
from .options import option_vector, resolve
from .structure import bound_signature
from .tape import Unsupported

#: kernel status code -> IPOPT status name (negative codes: ejected)
STATUS_NAMES = {0: "Solve_Succeeded", 1: "Solved_To_Acceptable_Level",
                2: "Diverging_Iterates", 3: "Maximum_Iterations_Exceeded"}

_layouts = weakref.WeakKeyDictionary()      # problem -> {bound signature: layout | None}
_layouts_lock = threading.Lock()


class _Buffers(threading.local):
    """Per thread and layout: the float workspace and a copy of the int array (its int
    scratch slots are written), so that threads never share written memory."""

    def __init__(self):
        self.by_layout = weakref.WeakKeyDictionary()


_buffers = _Buffers()


def layout_for(problem, lbx, ubx, lbg, ubg):
    """The :class:`.workspace_layout.WorkspaceLayout` of ``problem`` with this bound
    structure (built on first use, then reused), or None if the tape cannot express the
    model."""
    from .workspace_layout import WorkspaceLayout

    sig = bound_signature(lbx, ubx, lbg, ubg)
    with _layouts_lock:
        per = _layouts.setdefault(problem, {})
        if sig in per:
            return per[sig]
    try:
        lay = WorkspaceLayout(problem, lbx, ubx, lbg, ubg)
    except Unsupported:
        lay = None
    with _layouts_lock:
        return per.setdefault(sig, lay)


def _thread_buffers(lay):
    bufs = _buffers.by_layout.get(lay)
    if bufs is None:
        bufs = _buffers.by_layout[lay] = (lay.new_workspace(), lay.Ib.copy())
    return bufs


def solve_compiled(problem, x0=None, p=None, lbx=None, ubx=None, lbg=None, ubg=None,
                   **options):
    """Solve ``problem`` (a :class:`~caspar_backend.problem.Problem`) from ``x0`` with
    parameters ``p`` and bounds as ``Problem.solve`` takes them (None: the model's), or
    return None where the general path must solve (module docstring).  Options are
    ``Problem.solve``'s; an unknown name or a bad value raises OptionError, as there.
    Unlike ``Problem.solve`` this does not store ``p`` into the model.

    Returns a :class:`~caspar_backend.solver.result.SolveResult` with x, f, g (n, m float64
    arrays), lam_g, lam_x in CasADi's convention, status, iterations and message;
    ``extra = {'path': 'compiled'}``; no timings, counts or history yet."""
    from .kernels.ipm import solve_instance

    problem._require_hessian("solve_compiled")
    opts, reason = resolve(options)
    if reason:
        return None
    p = problem._param_vector(problem.p if p is None else p)
    x0 = as_vector("x0", problem.x0 if x0 is None else x0, problem.n)
    bounds = [problem.model.validated_bounds(name, v) for name, v in
              (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))]
    check_inputs(*bounds, x0, problem.var_names, problem.con_names)
    # writeable contiguous copies: the one argument type the kernels are compiled for (a
    # read-only or strided array would be another Numba type, compiled again)
    x0, lbx, ubx, lbg, ubg = (np.array(v, np.float64) for v in (x0, *bounds))
    if np.any(lbx == ubx):
        return None                 # fixed variables: not ported yet
    lay = layout_for(problem, lbx, ubx, lbg, ubg)
    if lay is None:
        return None
    Fb, Ib = _thread_buffers(lay)
    lay.p_of(Fb)[:] = p
    code, iterations, f = solve_instance(Fb, lay.FO, Ib, lay.IO, option_vector(opts),
                                         x0, lbx, ubx, lbg, ubg)
    if code < 0:
        return None
    status = STATUS_NAMES[int(code)]
    x, g, lam_g, lam_x = _unscaled_point(lay, Fb)
    return SolveResult(x=x, f=float(f) * lay.sense, g=g, lam_g=lam_g, lam_x=lam_x,
                       status=status, iterations=int(iterations),
                       message=STATUSES[status].exit_message, extra=dict(path="compiled"))


def warmup():
    """Compile the kernels for the argument types :func:`solve_compiled` passes, or load
    them from the cache (about a minute of CPU the first time on a machine, well under a
    second after).  Returns the seconds it took."""
    import time

    from numba import types

    from .kernels.ipm import solve_instance
    from .kernels.qdldl import elimination_tree

    t0 = time.perf_counter()
    f1, i1 = types.float64[::1], types.int64[::1]
    elimination_tree.compile((types.int64, i1, i1, i1, i1, i1))
    solve_instance.compile((f1, i1, i1, i1, f1, f1, f1, f1, f1, f1))
    return time.perf_counter() - t0


def _unscaled_point(lay, Fb):
    """(x, g, lam_g, lam_x) from the workspace after a solve, as batch/nlp.py
    ``BatchSlackNLP.unscale`` (no fixed variables): lam_g = y d_c / d_f,
    lam_x = (z_U - z_L)[:n] / d_f (z_L, z_U on the finite lower/upper bounds of w)."""
    v = lay.float_views(Fb)
    df = v["OBJ_SCALE"][0]
    lam_g = v["Y"] * v["CON_SCALE"] / df
    zw = np.zeros(lay.sizes["nw"])
    zw[lay.upper_idx] += v["ZU"]
    zw[lay.lower_idx] -= v["ZL"]
    return v["X"].copy(), v["G"].copy(), lam_g, zw[:lay.n] / df
