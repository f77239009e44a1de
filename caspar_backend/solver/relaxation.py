"""IPOPT's relaxation of the bounds of the slack problem (``bound_relax_factor``).

The interior point never reaches a bound exactly; IPOPT therefore moves every finite
bound ``b`` outwards by ``min(constr_viol_tol, bound_relax_factor max(1, |b|))`` in the
unscaled space, relaxed equalities of the condensed KKT system by
``equality_relax_factor`` instead (:mod:`caspar_backend.solver.nlp`).
"""

from __future__ import annotations

import numpy as np

from ..arrays import fused, is_host


def relaxed_bounds(xl, gl, xu, gu, eq, dci, opts):
    """``[wL, wU]`` along the last axis: the slack problem's bounds from the free
    variables' bounds ``xl``, ``xu`` (..., nx) and the slack rows' sides ``gl``, ``gu``
    (..., ns), whose rows ``eq`` (ns,) are relaxed equalities, scaled by ``dci`` (..., ns).
    IPOPT relaxes in the unscaled space, at most constr_viol_tol:
    ``b + sign min(constr_viol_tol, factor max(1, |b|))``, sign -1 on lower and +1 on
    upper bounds, factor bound_relax_factor, equality_relax_factor on relaxed equalities
    (their own positive band); infinite bounds stay as they are (0 * inf would make
    them NaN).  The four sides [x_L, g_L, x_U, g_U] in one pass (entry by entry the
    same operations as side by side), the slacks' sides then scaled.  A leading batch
    axis (B instances, :mod:`caspar_backend.batch.nlp`) broadcasts through."""
    brf = opts.bound_relax_factor
    nx, ns = xl.shape[-1], gl.shape[-1]
    nw = nx + ns
    b = np.concatenate([xl, gl, xu, gu], axis=-1)
    erf = np.where(eq, opts.equality_relax_factor, brf)
    xf = np.full(nx, brf)
    factor = np.concatenate([xf, erf, xf, erf])
    sign = np.repeat([-1.0, 1.0], nw)
    fin = np.isfinite(b)
    step = np.minimum(opts.constr_viol_tol,
                      factor * np.maximum(1.0, np.abs(np.where(fin, b, 0.0))))
    r = np.where(fin, b + sign * step, b)
    r[..., nx:nw] *= dci
    r[..., nw + nx:] *= dci
    return r


def slack_bounds(xp, xl, gl, xu, gu, eq, dci, opts):
    """:func:`relaxed_bounds` of one problem (``xl``, ``gl``, ``xu``, ``gu``, ``eq`` host
    vectors, ``dci`` an ``xp`` vector) as one ``xp`` vector ``[wL, wU]``: on the host
    those formulas, on the device the fused ``relax_bounds`` kernel (the same entry by
    entry, one launch instead of a dozen host passes and two uploads of the result)."""
    if is_host(xp):
        return relaxed_bounds(xl, gl, xu, gu, eq, dci, opts)
    r = xp.empty(2 * (len(xl) + len(gl)))
    fs = np.where(eq, opts.equality_relax_factor, opts.bound_relax_factor)
    fused.call(xp, "relax_bounds", *(xp.asarray(a) for a in (xl, gl, xu, gu, fs)), dci,
               float(len(xl)), float(len(gl)), opts.bound_relax_factor,
               opts.constr_viol_tol, r)
    return r
