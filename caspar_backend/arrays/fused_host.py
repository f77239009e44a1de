"""The NumPy references of the fused ops of :mod:`.fused` (the host side of each op).

Each reference is the expression the solver used before the op was fused -- written with
the same NumPy operations in the same order, so that a CPU solve through
:func:`.fused.call` is bit for bit the one before -- and the definition the device
kernel is checked against (tests/kkt/test_fused_kernels.py).  Arguments as the op's
(in-place outputs last, modified); module :mod:`.fused` documents each formula.
"""

from __future__ import annotations

import numpy as np

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


def _amax_abs(a):
    return _max_reduce(np.abs(a)) if a.size else np.zeros(())


def _barrier_sums(sL, idampL, sU, idampU):
    mins = [_min_reduce(v) for v in (sL, sU) if v.size]
    smin = (np.full((), np.inf) if not mins else mins[0] if len(mins) == 1
            else np.minimum(mins[0], mins[1]))
    return (smin, _sum_reduce(np.log(sL)), _sum_reduce(np.log(sU)),
            _sum_reduce(sL[idampL]), _sum_reduce(sU[idampU]))


def _step_reference(gphi, dw, w, h):
    return (gphi @ dw, _amax_abs(dw), _amax_abs(dw / (1.0 + np.abs(w))),
            _sum_reduce(np.abs(h)))


def _step_bounds(sL, iL, sU, iU, dw, zL, dzL, zU, dzU, tau):
    return (_ftb_min(sL, dw[iL], tau, 1.0), _ftb_min(sU, dw[iU], tau, -1.0),
            _ftb_min(zL, dzL, tau, 1.0), _ftb_min(zU, dzU, tau, 1.0))


def _optimality_norms(rd, h, y, w, sL, zL, sU, zU, mu):
    return (_amax_abs(rd), _amax_abs(h), _max_or_zero(sL * zL), _max_or_zero(sU * zU),
            _max_or_zero(np.abs(sL * zL - mu)), _max_or_zero(np.abs(sU * zU - mu)),
            _sum_reduce(zL), _sum_reduce(zU), _sum_reduce(np.abs(y)), _amax_abs(w))


def _constr_viol(hv, slack, ws, wLs, wUs, enforced, dc, dci):
    # SlackNLP.nlp_constr_viol and unscaled_constr_viol_term as they were, sharing the
    # bound violation (slack_bound_viol: the same values either way)
    m, ns = len(hv), len(slack)
    if not ns:
        scaled = _amax_abs(hv)
    else:
        gI = hv[slack] + ws
        v = np.maximum(np.maximum(wLs - gI, gI - wUs), 0.0)
        scaled = _max_reduce(v)
        if ns != m:
            scaled = np.maximum(scaled, _amax_abs(hv[enforced]))
    if m == 0:
        return scaled, np.zeros(())
    u = np.abs(hv) / dc
    if ns:
        u[slack] = v / dci
    return scaled, _max_reduce(u)


def _finite_abs_sum(h):
    return np.logical_and.reduce(np.isfinite(h)), _sum_reduce(np.abs(h))


def _all_finite2(a, b):
    return (np.logical_and.reduce(np.isfinite(a)) & np.logical_and.reduce(np.isfinite(b)),)


def _axpy(a, x, y):
    y += a * x


def _axpy_into(w, a, d, out):
    np.add(w, a * d, out=out)


def _gather_mul(v, y, idx, out):
    np.take(y, idx, out=out)
    np.multiply(v, out, out=out)


def _scaled_shift(dc, g, off, out):
    np.subtract(g, off, out=out)
    np.multiply(dc, out, out=out)


def _scale_add(c, b, a):
    a *= c
    a += b


def _private_ratio(jv, pe, sigma, pc, delta_w, out):
    np.take(jv, pe, out=out)
    out *= out
    d = sigma[pc]
    d += delta_w
    np.maximum(d, 1e-30, out=d)
    out /= d


def _concat_rhs(rw, rc, nw, m, b):
    nw, m = int(nw), int(m)
    b[:nw], b[nw:nw + m], b[nw + m:] = rw, rc, 0.0


def _gather_slacks(w, idx, b, nL):
    k = int(nL)
    s = np.empty_like(b)
    np.subtract(w[idx[:k]], b[:k], out=s[:k])
    np.subtract(b[k:], w[idx[k:]], out=s[k:])
    return s


def _gather_scale(a, idx, c, out):
    np.take(a, idx, out=out)
    out *= c


def _kkt_squares(hv, hoff, jv, sigma, nh, noff, nj, q):
    nh, noff, nj = int(nh), int(noff), int(nj)
    np.multiply(jv, jv, out=q[nh + noff:nh + noff + nj])
    np.multiply(hv, hv, out=q[:nh])
    np.take(q[:nh], hoff, out=q[nh:nh + noff])
    np.multiply(sigma, sigma, out=q[nh + noff + nj:])


def _col_static_term(sigma, delta_w, eps, ew, dstat_w, diag_w):
    np.sqrt(ew, out=ew)
    np.minimum(ew, 1.0, out=ew)
    ew *= eps
    dstat_w[...] = ew
    # (sigma + delta_w) + ew, in place: the association of the original expression
    np.add(sigma, delta_w, out=diag_w)
    diag_w += ew


def _row_static_term(priv, eps, delta_c, priv_on, ec, dstat_c, diag_c):
    np.minimum(ec, 1.0, out=ec)
    ec *= eps
    if priv_on:
        np.minimum(ec, priv, out=ec)
    ec -= delta_c
    np.maximum(ec, 0.0, out=ec)
    np.multiply(ec, -1.0, out=dstat_c)
    np.multiply(ec, -1.0, out=diag_c)
    diag_c -= delta_c


def _lagrangian_residual(g, aty, iL, zL, iU, zU, posL, posU):
    r = g + aty
    _add_scaled(iL, -1.0, zL, r)
    _add_scaled(iU, 1.0, zU, r)
    return r


def _barrier_gradient(g, iL, sL, dL, iU, sU, dU, c1L, c2L, c1U, c2U, posL, posU):
    r = g.copy()
    _add_barrier(iL, c1L, sL, c2L, dL, r)
    _add_barrier(iU, c1U, sU, c2U, dU, r)
    return r


def _bound_sigma(iL, zL, sL, iU, zU, sU, posL, posU, sigma):
    sigma.fill(0.0)
    _add_ratio(iL, zL, sL, sigma)
    _add_ratio(iU, zU, sU, sigma)


def _constraint_residual(dc, g, off, slack, ws, pos, out):
    _scaled_shift(dc, g, off, out)
    _add_scaled(slack, -1.0, ws, out)


def _scale_pad(c, g, pad, out):
    np.multiply(c, g, out=out[:g.size])
    out[g.size:] = pad


def _mul_pad(a, b, pad, out):
    np.multiply(a, b, out=out[:a.size])
    out[a.size:] = pad


def _reference_sums(gphi, dw, w, h, sL, idampL, sU, idampU, iL, iU, zL, dzL, zU, dzU, tau):
    return (_step_reference(gphi, dw, w, h) + _barrier_sums(sL, idampL, sU, idampU)
            + _step_bounds(sL, iL, sU, iU, dw, zL, dzL, zU, dzU, tau))


def _step_duals(a, dy, az, dzL, sL, dzU, sU, mu, ks, clip, ok, y, zL, zU):
    if not ok[0]:
        return
    _axpy(a, dy, y)
    _axpy(az, dzL, zL)
    _axpy(az, dzU, zU)
    if clip:
        _clip_ratio(sL, mu, ks, zL)
        _clip_ratio(sU, mu, ks, zU)
