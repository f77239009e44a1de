"""The result of solving B instances by the compiled kernel, one workspace row each (the
GPU launch, :mod:`.cuda.launch`, and the CPU batch, :mod:`.batch_cpu`).

Arrays (host, float64 unless said), for B instances, n variables, m constraints:

    code   int64 (B,)   solve_instance's status: 0..3 (solve.STATUS_NAMES), < 0 ejected
    iters  int64 (B,)   iterations
    f      (B,)         objective in the model's sense
    x      (B, n)       solution;   g (B, m) constraint values at x
    lam_g  (B, m), lam_x (B, n)  multipliers in CasADi's convention (as
                        :func:`caspar_backend.compiled.solve._unscaled_point`; a fixed
                        variable's from the kernel's slot F_LAM_X_FIXED)

Rows of ejected instances hold whatever the kernel left; callers re-solve them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KernelResult:
    """Final.  See the module doc."""

    code: np.ndarray
    iters: np.ndarray
    f: np.ndarray
    x: np.ndarray
    g: np.ndarray
    lam_g: np.ndarray
    lam_x: np.ndarray


def result_rows(ws, code, iters, fval) -> KernelResult:
    """The :class:`KernelResult` of the workspaces ``ws`` (a
    :class:`.cuda.workspaces.DeviceWorkspaces`) after a kernel ran: the unscaled point
    of each row (lam_g = y d_c / d_f; lam_x = (z_U - z_L)[:nx] / d_f at the free
    variables, minus the reduced gradient at the fixed ones)."""
    lay = ws.lay
    # (a row no kernel ran -- its call skipped after a Ctrl-C -- has d_f = 0; its values,
    # as an ejected row's, are not used: no warning.  The multipliers' inputs are read
    # in place: the arithmetic makes new arrays)
    y, cs, zl, zu, fixed = (ws.slot(k, copy=False) for k in ("Y", "CON_SCALE", "ZL", "ZU",
                                                              "LAM_X_FIXED"))
    lam_g, lam_x = unscaled_multipliers(lay, ws.slot("OBJ_SCALE", copy=False)[:, 0], y, cs,
                                        zl, zu, fixed)
    return KernelResult(code=np.asarray(code), iters=np.asarray(iters),
                        f=np.asarray(fval) * lay.sense, x=ws.slot("X"), g=ws.slot("G"),
                        lam_g=lam_g, lam_x=lam_x)


def unscaled_multipliers(lay, df, y, con_scale, zl, zu, lam_x_fixed):
    """``(lam_g, lam_x)`` in the user's convention from a solve's scaled values, as
    solver/nlp.py ``SlackNLP.unscale``: lam_g = y d_c / d_f; lam_x = (z_U - z_L)[:nx] /
    d_f at the free variables (z_L, z_U on the finite lower/upper bounds of w),
    ``lam_x_fixed`` (the kernel's F_LAM_X_FIXED: minus the reduced gradient) at the fixed
    ones.  One instance (``df`` a scalar, the rest 1-D) or B (``df`` (B,), the rest
    (B, k)); a zero d_f gives inf/NaN without a warning."""
    lead = np.shape(y)[:-1]
    d = np.asarray(df)[..., None]
    zw = np.zeros(lead + (lay.sizes["nw"],))
    zw[..., lay.upper_sel] += zu
    zw[..., lay.lower_sel] -= zl
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_g = y * con_scale / d
        free = zw[..., :lay.sizes["nx"]] / d
    if len(lay.fixed_idx) == 0:
        return lam_g, free
    lam_x = np.zeros(lead + (lay.n,))
    lam_x[..., lay.free_idx] = free
    lam_x[..., lay.fixed_idx] = lam_x_fixed
    return lam_g, lam_x
