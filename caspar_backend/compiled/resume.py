"""The general path's :class:`~caspar_backend.solver.resume.ResumePoint` of a solve the
kernel handed over: the state of the interior point as the iteration it handed over in
began, read from the workspace.

The kernel (:func:`.kernels.ipm.solve_instance`) saves, as each iteration begins, what
the iteration may change before a hand-over leaves it (slot F_RESUME,
:mod:`.kernels.resume_state`); the iterate itself stays in its slots, since every
hand-over inside an iteration leaves before a step is accepted.  Not resumable (the
general path then solves from the start, as before): a hand-over before the first
iteration (``R_CLEAN`` 0: no iteration began), after the iterate moved (a step accepted,
or the watchdog's stored iterate restored), while the watchdog runs (its stored iterate
and direction are not carried over), or once an acceptable iterate was counted (the
general path keeps the latest acceptable point for a failed line search; the kernel
does not).
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
                                   R_N_LS, R_TAG, R_TAU, R_WD_ACTIVE)
from .kernels.slots import (IC_DC_USED, IC_DW_LAST, IC_EPS, IC_EPS_BEFORE_SLOW,
                            IC_EPS_RESTORE, IC_SLOW_OFF, IC_STATE_SIZE)

_ITERATE = ("W", "Y", "ZL", "ZU", "F_CUR", "H", "GRAD_W", "JV", "RESUME")


def _optional(v: float, none_below: float | None = None):
    """None for NaN (or below ``none_below``), else the float."""
    if math.isnan(v) or (none_below is not None and v < none_below):
        return None
    return float(v)


def resume_point(lay, Fb, hist) -> ResumePoint | None:
    """The :class:`ResumePoint` of the solve in workspace ``Fb`` of layout ``lay`` (the
    kernel returned: a hand-over, or the end of its iteration budget), ``hist`` its
    iteration history (:mod:`.kernels.record`); None where it is not resumable (module
    doc)."""
    v = lay.float_views(Fb, _ITERATE)
    R = v["RESUME"]
    if R[R_CLEAN] != 1.0 or R[R_WD_ACTIVE] != 0.0 or R[R_ACC_COUNT] != 0.0:
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
    history = tuple(IterationRecord(j, *row[:HIST_LS], int(row[HIST_LS]),
                                    TAGS[int(row[HIST_TAG])], False)
                    for j, row in enumerate(hist[:k].tolist()))
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
        tiny_step=bool(ls[4] == 1.0), delta_w_last=float(st[IC_DW_LAST]),
        delta_c_used=bool(st[IC_DC_USED] == 1.0), static_regularization=float(st[IC_EPS]),
        eps_restore=_optional(st[IC_EPS_RESTORE], 0.0),
        eps_before_slow=_optional(st[IC_EPS_BEFORE_SLOW], 0.0),
        slow_rule_off=bool(st[IC_SLOW_OFF] == 1.0), last_obj=_optional(R[R_LAST_OBJ]),
        info=info, history=history, counts=counts)
