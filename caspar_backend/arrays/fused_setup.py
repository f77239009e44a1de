"""Fused kernels of a solve's one-time setup: the relaxed bounds and the pushed start.

Once per solve the slack problem's bounds are relaxed and the starting point is pushed
inside them (:mod:`caspar_backend.solver.relaxation`, :mod:`caspar_backend.solver.initial`).
On the host these are a dozen NumPy passes over vectors of the problem's size; at 10^6
entries (case78484) they were ~80 ms of a 4.6 s GPU re-solve, plus the copies between
host and device around them.  On the device each is **one** kernel of the fused module
(:mod:`.fused`; one CuPy kernel per NumPy operation would cost a new process ~20 ms of
NVRTC preprocessing per kernel on first use).  The references are the host formulas,
entry by entry; the kernels add with ``__dadd_rn`` where a product feeds a sum, so that
no fused multiply-add rounds differently: results equal the host's bit for bit.

* ``relax_bounds(xl, gl, xu, gu, fs, dci, nx, ns, brf, cvt, r)``: r <- [x_L, g_L, x_U,
  g_U] relaxed (``nx`` = len(xl), ``ns`` = len(gl), as floats), each finite bound ``b``
  moved outwards by ``min(cvt, f max(1, |b|))`` (f = ``brf`` on the variables, ``fs``
  on the slack rows), the slack rows' sides then scaled by ``dci``
  (:func:`caspar_backend.solver.relaxation.relaxed_bounds` with ``fs`` its per-row
  factor)
* ``push_bounds(wL, wU, k1, k2, v)``: v <- v pushed inside [wL, wU] (IPOPT's
  push_variables, :func:`caspar_backend.solver.initial.pushed`: the push
  ``min(k1 max(1, |b|), k2 (wU - wL))``, the midpoint where both pushes cross)
* ``row_abs_max(jv, perm, indptr, out)``: out_i <- max(0, max_k |jv[perm[k]]|) over
  ``indptr[i] <= k < indptr[i + 1]`` (a CSR plan of the Jacobian's rows; a NaN
  propagates, as ``numpy.maximum.at`` does) -- the gradient-based scaling's row norms
"""

from __future__ import annotations

import numpy as np

from .fused_cuda import Elementwise


def _relax_bounds(xl, gl, xu, gu, fs, dci, nx, ns, brf, cvt, r):
    # side by side (no host array made: the reference also runs on device arrays in
    # the tests' emulation), entry by entry relaxed_bounds' operations
    nx = int(nx)
    nw = nx + int(ns)
    for off, x, g, sign in ((0, xl, gl, -1.0), (nw, xu, gu, 1.0)):
        for at, b, f in ((off, x, brf), (off + nx, g, fs)):
            fin = np.isfinite(b)
            step = np.minimum(cvt, f * np.maximum(1.0, np.abs(np.where(fin, b, 0.0))))
            r[at:at + b.size] = np.where(fin, b + sign * step, b)
        r[off + nx:off + nw] *= dci


def _push_bounds(wL, wU, k1, k2, v):
    with np.errstate(invalid="ignore"):
        qL, qU = k1 * np.maximum(1, np.abs(wL)), k1 * np.maximum(1, np.abs(wU))
        pL = np.where(np.isfinite(wU), np.minimum(qL, k2 * (wU - wL)), qL)
        pU = np.where(np.isfinite(wL), np.minimum(qU, k2 * (wU - wL)), qU)
        lo = np.where(np.isfinite(wL), wL + pL, -np.inf)
        hi = np.where(np.isfinite(wU), wU - pU, np.inf)
        v[...] = np.where(lo > hi, 0.5 * (wL + wU), np.minimum(np.maximum(v, lo), hi))


def _row_abs_max(jv, perm, indptr, out):
    # (``like=out``: the tests' emulation passes device arrays posing as NumPy ones)
    rows = np.repeat(np.arange(out.size, like=out), np.diff(indptr))
    out[...] = 0.0
    with np.errstate(invalid="ignore"):
        np.maximum.at(out, rows, np.abs(jv[perm]))


#: name -> (kernel spec, NumPy reference), merged into :data:`.fused.OPS`
SETUP_OPS = {
    "relax_bounds": (Elementwise(
        "raw xl, raw gl, raw xu, raw gu, raw fs, raw dci, scalar nx, scalar ns, scalar brf, "
        "scalar cvt, inout r",
        "const long long a = (long long)nx, nw = a + (long long)ns; "
        "const bool up = i >= nw; const long long k = up ? i - nw : i; "
        "const bool x = k < a; "
        "const double b = x ? (up ? xu[k] : xl[k]) : (up ? gu[k - a] : gl[k - a]); "
        "double v = b; "
        "if (CASPAR_FINITE(b)) { "
        "const double f = x ? brf : fs[k - a]; "
        "const double st = CASPAR_MIN(cvt, f * CASPAR_MAX(1.0, fabs(b))); "
        "v = up ? __dadd_rn(b, st) : __dadd_rn(b, -st); } "
        "r[i] = x ? v : v * dci[k - a]", "r"), _relax_bounds),
    "push_bounds": (Elementwise(
        "vec wL, vec wU, scalar k1, scalar k2, inout v",
        "const double l = wL[i], u = wU[i]; "
        "const bool fl = CASPAR_FINITE(l), fu = CASPAR_FINITE(u); "
        "const double ql = k1 * CASPAR_MAX(1.0, fabs(l)), qu = k1 * CASPAR_MAX(1.0, fabs(u)); "
        "const double pl = fu ? CASPAR_MIN(ql, k2 * (u - l)) : ql; "
        "const double pu = fl ? CASPAR_MIN(qu, k2 * (u - l)) : qu; "
        "const double lo = fl ? __dadd_rn(l, pl) : -CASPAR_INF; "
        "const double hi = fu ? __dadd_rn(u, -pu) : CASPAR_INF; "
        "v[i] = lo > hi ? 0.5 * (l + u) : CASPAR_MIN(CASPAR_MAX(v[i], lo), hi)", "wL"),
        _push_bounds),
    "row_abs_max": (Elementwise(
        "raw jv, idx perm, idx indptr, inout out",
        "double m = 0.0; "
        "for (long long k = indptr[i]; k < indptr[i + 1]; ++k) "
        "m = CASPAR_MAX(m, fabs(jv[perm[k]])); "
        "out[i] = m", "out"), _row_abs_max),
}
