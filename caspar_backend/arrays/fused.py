"""Fused vector kernels of the interior-point iteration.

On the device every array operation is a kernel launch with ~10–40 µs of CuPy overhead,
and at 10^4–10^5 unknowns an iteration's few hundred small operations, not their memory
traffic, set its floor.  Each entry of :data:`OPS` is one formula of the iteration that
NumPy evaluates as a few array operations and the device as **one** kernel of
:mod:`.fused_cuda` (raw CUDA, one module compiled once per process, launched directly:
~5 µs of host time).  :func:`call` runs the entry's NumPy ``reference`` on the host --
written as the expressions the solver used before, so CPU results are unchanged bit for
bit -- and its kernel on the device, with the same arguments; the results agree to
rounding (a fused multiply-add may round once where two operations round twice; a
device sum adds in another order).  A strided input (never passed by the solver) is
copied first; an in-place output must be contiguous.

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

from . import fused_cuda
from .fused_cuda import Elementwise, Reduction


@dataclass(frozen=True)
class FusedOp:
    """Final.  ``kernel``: the device kernel's spec (:class:`~.fused_cuda.Elementwise` or
    :class:`~.fused_cuda.Reduction`); ``reference``: the NumPy formula, called with the
    kernel's arguments (in-place outputs last, modified)."""

    kernel: Elementwise | Reduction
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
    "amax_abs": FusedOp(Reduction("vec a", "fabs(a[i])", "max", "0.0"),
                        lambda a: _max_or_zero(np.abs(a))),
    "all_finite": FusedOp(Reduction("vec v", "CASPAR_FINITE(v[i]) ? 1.0 : 0.0", "min", "1.0",
                                    "bool"), _all_finite),
    "ftb_min": FusedOp(Reduction("vec s, vec ds, scalar tau, scalar sign",
                                 "sign * ds[i] < 0 ? -tau * s[i] / (sign * ds[i]) : CASPAR_INF",
                                 "min", "CASPAR_INF"), _ftb_min),
    "sum_log": FusedOp(Reduction("vec s", "log(s[i])", "sum", "0.0"),
                       lambda s: _sum_reduce(np.log(s))),
    "max_prod": FusedOp(Reduction("vec s, vec z", "s[i] * z[i]", "max", "0.0"),
                        lambda s, z: _max_or_zero(s * z)),
    "max_abs_shift": FusedOp(Reduction("vec s, vec z, scalar mu", "fabs(s[i] * z[i] - mu)",
                                       "max", "0.0"),
                             lambda s, z, mu: _max_or_zero(np.abs(s * z - mu))),
    "gather_slack": FusedOp(Elementwise("raw w, idx idx, vec b, scalar sign",
                                        "s[i] = sign * (w[idx[i]] - b[i])", "b", "s"),
                            lambda w, idx, b, sign: w[idx] - b if sign > 0 else b - w[idx]),
    "bound_mult_step": FusedOp(Elementwise("scalar mu, vec z, vec s, raw dw, idx idx, "
                                           "scalar sign",
                                           "dz[i] = (mu - z[i] * s[i] - sign * z[i] * "
                                           "dw[idx[i]]) / s[i]", "z", "dz"),
                               _bound_mult_step),
    "add_ratio": FusedOp(Elementwise("idx idx, vec num, vec s, inout out",
                                     "out[idx[i]] += num[i] / s[i]", "idx"), _add_ratio),
    "add_scaled": FusedOp(Elementwise("idx idx, scalar c, vec v, inout out",
                                      "out[idx[i]] += c * v[i]", "idx"), _add_scaled),
    "add_barrier": FusedOp(Elementwise("idx idx, scalar c1, vec s, scalar c2, vec d, "
                                       "inout out",
                                       "out[idx[i]] += c1 / s[i] + c2 * d[i]", "idx"),
                           _add_barrier),
    "residual_static": FusedOp(Elementwise("vec b, vec kv, vec d, vec v",
                                           "r[i] = b[i] - kv[i] + d[i] * v[i]", "b", "r"),
                               lambda b, kv, d, v: b - kv + d * v),
    "clip_ratio": FusedOp(Elementwise("vec s, scalar mu, scalar ks, inout z",
                                      "z[i] = fmin(fmax(z[i], mu / (ks * s[i])), "
                                      "ks * mu / s[i])", "s"), _clip_ratio),
}

#: the specs, the table :mod:`.fused_cuda` compiles
SPECS = {name: op.kernel for name, op in OPS.items()}

_REFERENCE = {name: op.reference for name, op in OPS.items()}

#: ops whose result is an output argument (in place): skipped for empty index sets,
#: where a kernel has no size to launch with
IN_PLACE = ("add_ratio", "add_scaled", "add_barrier", "clip_ratio")


def call(xp, name, *args):
    """``OPS[name]`` on ``args``: the NumPy reference on the host, the kernel on the
    device (one launch).  In-place ops return None."""
    if xp is np:                    # is_host, inlined: the hot path of every op
        return _REFERENCE[name](*args)
    if name in IN_PLACE and not (args[-1].size and args[0].size):
        return None
    if not fused_cuda.contiguous(args):
        if name in IN_PLACE:
            raise ValueError(f"fused op {name}: the arrays must be contiguous")
        args = tuple(xp.ascontiguousarray(a) if hasattr(a, "flags") else a for a in args)
    return fused_cuda.module(xp, SPECS).launch(name, args)


def amax_abs(xp, a):
    """max |a| as a 0-d array (0.0 for an empty ``a``): ``OPS['amax_abs']`` (on the host
    its reference inlined: the most frequent reduction of an iteration)."""
    if xp is np:
        return _max_reduce(np.abs(a)) if a.size else np.zeros(())
    return call(xp, "amax_abs", a)
