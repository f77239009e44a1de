"""The general path's :class:`~caspar_backend.solver.resume.ResumePoint` of a solve the
kernel handed over: the state of the interior point as the iteration it handed over in
began, read from the workspace (:func:`resume_point`); and the other way, a point the
general path hands back, written into the workspace for the kernel to go on from
(:func:`write_state`).

The kernel (:func:`.kernels.ipm.solve_instance`) saves, as each iteration begins, what
the iteration may change before a hand-over leaves it (slot F_RESUME,
:mod:`.kernels.resume_state`); the iterate itself stays in its slots, since every
hand-over inside an iteration leaves before a step is accepted.  Not resumable (the
general path then solves from the start, as before): a hand-over before the first
iteration (``R_CLEAN`` 0: no iteration began), after the iterate moved (a step accepted,
or the watchdog's stored iterate restored), or while the watchdog runs (its stored
iterate and direction are not carried over).  The latest acceptable iterate, which the
general path keeps for a failed line search, is in slot F_ACCEPTABLE.
"""
from __future__ import annotations

import math

import numpy as np

from ..solver.iterate import StepInfo
from ..solver.result import IterationRecord
from ..solver.resume import ResumePoint
from .kernels.record import COUNT_KEYS, HIST_LS, HIST_TAG, TAGS
from .kernels.resume_state import (R_ACC_COUNT, R_ALPHA_DU, R_ALPHA_PR, R_CLEAN,
                                   R_COUNTS, R_D_NORM, R_DELTA_W, R_FILTER, R_FILTER_STATE,
                                   R_IC_STATE, R_ITER, R_LAST_OBJ, R_LS_STATE, R_MU,
                                   R_N_LS, R_START, R_TAG, R_TAU, R_WD_ACTIVE)
from .kernels.slots import (IC_DEGEN_ITERS, IC_DW_LAST, IC_EPS, IC_EPS_BEFORE_SLOW,
                            IC_EPS_RESTORE, IC_HESS_DEG, IC_JAC_DEG, IC_SLOW_OFF,
                            IC_STATE_SIZE, IC_TEST)

_ITERATE = ("W", "Y", "ZL", "ZU", "F_CUR", "H", "GRAD_W", "JV", "RESUME")



def _optional(v: float, none_below: float | None = None):
    """None for NaN (or below ``none_below``), else the float."""
    if math.isnan(v) or (none_below is not None and v < none_below):
        return None
    return float(v)


def resume_point(lay, Fb, hist, start=None) -> ResumePoint | None:
    """The :class:`ResumePoint` of the solve in workspace ``Fb`` of layout ``lay`` (the
    kernel returned: a hand-over, or the end of its iteration budget), ``hist`` its
    iteration history (:mod:`.kernels.record`); ``start`` the point its run started
    from where a general path handed the solve back (None: from x0): its history stands
    for the rows before (the list is extended, not copied), and what the kernel does not have passes through (the
    restoration phases so far, the printed log); None where it is not resumable (module
    doc)."""
    v = lay.float_views(Fb, _ITERATE)
    R = v["RESUME"]
    if R[R_CLEAN] != 1.0 or R[R_WD_ACTIVE] != 0.0:
        return None
    k = int(R[R_ITER])
    if k > len(hist):
        return None
    ft = R[R_FILTER:]
    K = len(ft) // 2
    entries = tuple((float(t), float(p)) for t, p in zip(ft[:K], ft[K:]) if t < np.inf)
    st = R[R_IC_STATE:R_IC_STATE + IC_STATE_SIZE]
    ls = R[R_LS_STATE:R_LS_STATE + 5]
    fi = R[R_FILTER_STATE:R_FILTER_STATE + 3]
    counts = {key: int(R[R_COUNTS + j]) for j, key in enumerate(COUNT_KEYS)}
    n_acc = int(R[R_ACC_COUNT])
    history = [] if start is None else start.history      # (the solve's list, extended)
    history.extend(records(hist, 0 if start is None else start.iteration, k))
    info = StepInfo(alpha_du=float(R[R_ALPHA_DU]), alpha_pr=float(R[R_ALPHA_PR]),
                    ls=int(R[R_N_LS]), d_norm=float(R[R_D_NORM]),
                    delta_w=float(R[R_DELTA_W]), tag=TAGS[int(R[R_TAG])])
    return ResumePoint(
        iteration=k, w=v["W"].copy(), y=v["Y"].copy(), zL=v["ZL"].copy(),
        zU=v["ZU"].copy(), f=float(v["F_CUR"][0]), h=v["H"].copy(),
        gradf=v["GRAD_W"].copy(), jv=v["JV"].copy(), mu=float(R[R_MU]),
        tau=float(R[R_TAU]), filter_entries=entries, rejected_by_filter=bool(fi[0]),
        filter_rejections=int(fi[1]), filter_resets=int(fi[2]), theta_min=float(ls[0]),
        theta_max=float(ls[1]), last_mu=_optional(ls[2]), shortened=int(ls[3]),
        tiny_step=bool(int(ls[4]) & 1), tiny_last=bool(int(ls[4]) & 2),
        delta_w_last=float(st[IC_DW_LAST]),
        degeneracy=tuple(int(st[k]) for k in (IC_HESS_DEG, IC_JAC_DEG, IC_DEGEN_ITERS,
                                                IC_TEST)),
        static_regularization=float(st[IC_EPS]),
        eps_restore=_optional(st[IC_EPS_RESTORE], 0.0),
        eps_before_slow=_optional(st[IC_EPS_BEFORE_SLOW], 0.0),
        slow_rule_off=bool(st[IC_SLOW_OFF] == 1.0), last_obj=_optional(R[R_LAST_OBJ]),
        info=info, history=history, counts=counts, acceptable_count=n_acc,
        acceptable_point=_acceptable_parts(lay, Fb) if n_acc else None,
        **({} if start is None else dict(n_resto=start.n_resto,
                                         resto_mu_kept=start.resto_mu_kept,
                                         log=start.log, logged=start.logged)))


def _acceptable_parts(lay, Fb, copy=True) -> tuple:
    """``(w, y, zL, zU)`` of slot F_ACCEPTABLE (``[w | y | zL | zU]``): copies, or
    views with ``copy`` False."""
    sz = lay.sizes
    cuts = np.cumsum([0, sz["nw"], sz["m"], sz["nL"], sz["nU"]])
    a = lay.float_views(Fb, ("ACCEPTABLE",))["ACCEPTABLE"]
    parts = tuple(a[cuts[k]:cuts[k + 1]] for k in range(4))
    return tuple(p.copy() for p in parts) if copy else parts


def records(hist, start, stop) -> tuple:
    """The :class:`~caspar_backend.solver.result.IterationRecord` of rows ``start`` to
    ``stop - 1`` of a kernel's history ``hist``."""
    return tuple(IterationRecord(start + j, *row[:HIST_LS], int(row[HIST_LS]),
                                 TAGS[int(row[HIST_TAG])], False)
                 for j, row in enumerate(hist[start:stop].tolist()))


def write_state(lay, Fb, point: ResumePoint) -> None:
    """:func:`resume_point`'s inverse: ``point`` (a general path's state as an iteration
    begins, handed back) into the workspace ``Fb``, and the mark that makes the kernel's
    next solve start from it (``R_START``).  The caller checked that the kernel can
    represent it (:meth:`~caspar_backend.solver.ipm.InteriorPoint.kernel_can_go_on`)."""
    v = lay.float_views(Fb, _ITERATE)
    for name, a in (("W", point.w), ("Y", point.y), ("ZL", point.zL), ("ZU", point.zU),
                    ("H", point.h), ("GRAD_W", point.gradf), ("JV", point.jv)):
        v[name][:] = a
    v["F_CUR"][0] = point.f
    R = v["RESUME"]
    R[R_ITER], R[R_MU], R[R_TAU] = point.iteration, point.mu, point.tau
    R[R_ACC_COUNT] = point.acceptable_count
    if point.acceptable_point is not None:
        for part, a in zip(_acceptable_parts(lay, Fb, copy=False), point.acceptable_point):
            part[:] = a
    R[R_LAST_OBJ] = np.nan if point.last_obj is None else point.last_obj
    i = point.info
    R[R_D_NORM], R[R_DELTA_W], R[R_ALPHA_DU], R[R_ALPHA_PR] = (i.d_norm, i.delta_w,
                                                               i.alpha_du, i.alpha_pr)
    R[R_N_LS], R[R_TAG] = i.ls, TAGS.index(i.tag)
    for j, key in enumerate(COUNT_KEYS):
        R[R_COUNTS + j] = point.counts[key]
    R[R_COUNTS + len(COUNT_KEYS)] = 0.0         # evaluation errors (logged already)
    R[R_WD_ACTIVE] = 0.0
    R[R_FILTER_STATE:R_FILTER_STATE + 3] = (point.rejected_by_filter,
                                            point.filter_rejections, point.filter_resets)
    R[R_LS_STATE:R_LS_STATE + 5] = (point.theta_min, point.theta_max,
                                    np.nan if point.last_mu is None else point.last_mu,
                                    point.shortened,
                                    float(point.tiny_step) + 2.0 * float(point.tiny_last))
    st = R[R_IC_STATE:R_IC_STATE + IC_STATE_SIZE]
    st[:] = 0.0
    st[IC_DW_LAST] = point.delta_w_last
    st[IC_EPS] = point.static_regularization
    st[IC_EPS_RESTORE] = -1.0 if point.eps_restore is None else point.eps_restore
    st[IC_HESS_DEG], st[IC_JAC_DEG], st[IC_DEGEN_ITERS], st[IC_TEST] = point.degeneracy
    st[IC_EPS_BEFORE_SLOW] = -1.0 if point.eps_before_slow is None else point.eps_before_slow
    st[IC_SLOW_OFF] = 1.0 if point.slow_rule_off else 0.0
    ft = R[R_FILTER:]
    K = len(ft) // 2
    ft[:] = np.inf
    for j, (t, p) in enumerate(point.filter_entries):
        ft[j], ft[K + j] = t, p
    R[R_START] = 1.0
