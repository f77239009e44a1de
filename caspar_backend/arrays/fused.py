"""Fused vector kernels of the interior-point iteration.

On the device every array operation is a kernel launch with ~10–40 µs of CuPy overhead,
and at 10^4–10^5 unknowns an iteration's few hundred small operations, not their memory
traffic, set its floor.  Each entry of :data:`OPS` is one formula of the iteration that
NumPy evaluates as a few array operations and the device as **one** kernel (a CuPy
``ElementwiseKernel`` or ``ReductionKernel``, compiled on first use and cached by CuPy).
:func:`call` runs the entry's NumPy ``reference`` on the host — written as the expressions
the solver used before, so CPU results are unchanged bit for bit — and its kernel on the
device, with the same arguments; the results agree to rounding (a fused multiply-add may
round once where two operations round twice).

Notation: ``s`` slacks, ``z`` bound multipliers, ``idx`` an int64 index set without
duplicates (a bounded-variable list ``iL`` or ``iU``), ``sign`` +1.0 or -1.0 (the
upper-bound twin of a lower-bound formula: multiplying by it is exact, so it changes no
rounding).  Scalars are Python floats.

Reductions (a 0-d array, not read back; the identity for empty input):

* ``amax_abs(a)``: max_i |a_i| (0 when empty)
* ``all_finite(a)``: all_i isfinite(a_i) (True when empty; a bool)
* ``ftb_min(s, ds, tau, sign)``: min over sign ds_i < 0 of -tau s_i / (sign ds_i) (+inf)
* ``sum_log(s)``: sum_i log s_i
* ``max_prod(s, z)``: max_i s_i z_i (0 when empty)
* ``max_abs_shift(s, z, mu)``: max_i |s_i z_i - mu| (0 when empty)

Elementwise (a new array, or in place in the last argument):

* ``gather_slack(w, idx, b, sign)``: sign (w[idx] - b)
* ``bound_mult_step(mu, z, s, dw, idx, sign)``: (mu - z s - sign z dw[idx]) / s
* ``add_ratio(idx, num, s, out)``: out[idx] += num / s
* ``add_scaled(idx, c, v, out)``: out[idx] += c v
* ``add_barrier(idx, c1, s, c2, d, out)``: out[idx] += c1 / s + c2 d
* ``residual_static(b, kv, d, v)``: b - kv + d v
* ``clip_ratio(s, mu, ks, z)``: z <- min(max(z, mu / (ks s)), ks mu / s)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


_PREAMBLE = "#define CASPAR_INF __longlong_as_double(0x7ff0000000000000LL)\n"


@dataclass(frozen=True)
class FusedOp:
    """Final.  ``kernel``: ``("elementwise", in_params, out_params, operation)`` or
    ``("reduction", in_params, out_params, map_expr, reduce_expr, identity,
    reduce_type)`` in CuPy's kernel syntax; ``reference``: the NumPy formula, called with
    the kernel's arguments (in-place outputs last, modified)."""

    kernel: tuple
    reference: Callable


# Host references call the ufuncs' ``reduce`` directly: ``np.max``/``np.sum``/``np.min``
# are these reductions behind a Python dispatch layer (the same pairwise sums, bit for
# bit), and an iteration of a small problem makes hundreds of them.
_max_reduce, _min_reduce, _sum_reduce = np.maximum.reduce, np.minimum.reduce, np.add.reduce


def _max_or_zero(v):
    return _max_reduce(v) if v.size else np.zeros(())


def _add_scaled(idx, c, v, out):
    if c > 0:
        out[idx] += v
    else:
        out[idx] -= v


def _clip_ratio(s, mu, ks, z):
    np.clip(z, mu / (ks * s), ks * mu / s, out=z)


def _all_finite(a):
    return np.logical_and.reduce(np.isfinite(a))


def _ftb_min(s, ds, tau, sign):
    # the ratios of the entries with sign ds < 0 only (the same quotients; no division
    # by zero elsewhere, so no floating-point state to silence)
    d = sign * ds
    neg = d < 0
    if not neg.any():               # the kernel's identity, also for empty input
        return np.full((), np.inf)
    return _min_reduce(-tau * s[neg] / d[neg])


def _bound_mult_step(mu, z, s, dw, idx, sign):
    return (mu - z * s - z * dw[idx]) / s if sign > 0 else (mu - z * s + z * dw[idx]) / s


def _add_ratio(idx, num, s, out):
    out[idx] += num / s


def _add_barrier(idx, c1, s, c2, d, out):
    out[idx] += c1 / s + c2 * d


OPS = {
    "amax_abs": FusedOp(("reduction", "T v", "T y", "fabs(v)", "max(a, b)", "0", None),
                        lambda a: _max_or_zero(np.abs(a))),
    "all_finite": FusedOp(("reduction", "T v", "bool y", "isfinite(v)", "a && b", "true",
                           "bool"), _all_finite),
    "ftb_min": FusedOp(("reduction", "T s, T ds, T tau, T sign", "T y",
                        "sign * ds < 0 ? -tau * s / (sign * ds) : CASPAR_INF", "min(a, b)",
                        "CASPAR_INF", None), _ftb_min),
    "sum_log": FusedOp(("reduction", "T s", "T y", "log(s)", "a + b", "0", None),
                       lambda s: _sum_reduce(np.log(s))),
    "max_prod": FusedOp(("reduction", "T s, T z", "T y", "s * z", "max(a, b)", "0", None),
                        lambda s, z: _max_or_zero(s * z)),
    "max_abs_shift": FusedOp(("reduction", "T s, T z, T mu", "T y", "fabs(s * z - mu)",
                              "max(a, b)", "0", None),
                             lambda s, z, mu: _max_or_zero(np.abs(s * z - mu))),
    "gather_slack": FusedOp(("elementwise", "raw T w, raw int64 idx, T b, T sign", "T s",
                             "s = sign * (w[idx[i]] - b)"),
                            lambda w, idx, b, sign: w[idx] - b if sign > 0 else b - w[idx]),
    "bound_mult_step": FusedOp(("elementwise",
                                "T mu, T z, T s, raw T dw, raw int64 idx, T sign", "T dz",
                                "dz = (mu - z * s - sign * z * dw[idx[i]]) / s"),
                               _bound_mult_step),
    "add_ratio": FusedOp(("elementwise", "raw int64 idx, T num, T s", "raw T out",
                          "out[idx[i]] += num / s"), _add_ratio),
    "add_scaled": FusedOp(("elementwise", "raw int64 idx, T c, T v", "raw T out",
                           "out[idx[i]] += c * v"), _add_scaled),
    "add_barrier": FusedOp(("elementwise", "raw int64 idx, T c1, T s, T c2, T d",
                            "raw T out", "out[idx[i]] += c1 / s + c2 * d"), _add_barrier),
    "residual_static": FusedOp(("elementwise", "T b, T kv, T d, T v", "T r",
                                "r = b - kv + d * v"),
                               lambda b, kv, d, v: b - kv + d * v),
    "clip_ratio": FusedOp(("elementwise", "T s, T mu, T ks", "T z",
                           "z = min(max(z, mu / (ks * s)), ks * mu / s)"), _clip_ratio),
}

_REFERENCE = {name: op.reference for name, op in OPS.items()}

#: ops whose result is an output argument (in place): skipped for empty index sets,
#: where a kernel has no size to launch with
IN_PLACE = ("add_ratio", "add_scaled", "add_barrier", "clip_ratio")

_KERNELS: dict = {}


def kernel(xp, name):
    """The CuPy kernel of ``OPS[name]`` for the array module ``xp`` (built once)."""
    key = (id(xp), name)
    k = _KERNELS.get(key)
    if k is None:
        kind, *spec = OPS[name].kernel
        if kind == "elementwise":
            i, o, op = spec
            k = xp.ElementwiseKernel(i, o, op, "caspar_" + name, preamble=_PREAMBLE)
        else:
            i, o, m, r, ident, rtype = spec
            k = xp.ReductionKernel(i, o, m, r, "y = a", ident, "caspar_" + name,
                                   reduce_type=rtype, preamble=_PREAMBLE)
        _KERNELS[key] = k
    return k


def call(xp, name, *args):
    """``OPS[name]`` on ``args``: the NumPy reference on the host, the kernel on the
    device (one launch).  In-place ops return None."""
    if xp is np:                    # is_host, inlined: the hot path of every op
        return _REFERENCE[name](*args)
    if name in IN_PLACE:
        if args[-1].size and args[0].size:
            kernel(xp, name)(*args)
        return None
    return kernel(xp, name)(*args)


def amax_abs(xp, a):
    """max |a| as a 0-d array (0.0 for an empty ``a``): ``OPS['amax_abs']`` (on the host
    its reference inlined: the most frequent reduction of an iteration)."""
    if xp is np:
        return _max_reduce(np.abs(a)) if a.size else np.zeros(())
    return call(xp, "amax_abs", a)
