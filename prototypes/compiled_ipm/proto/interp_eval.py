# ---- evaluation by a generic tape interpreter (the model is data) ----------------
# Numba subset: scalar loops, math.*, array indexing only (no allocation): the same
# source could be a CUDA device function (one thread per instance).
import math

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False, error_model="numpy")
def _fmax_np(a, b):      # np.fmax: NaN-ignoring
    if a != a:
        return b
    if b != b:
        return a
    return a if a >= b else b


@njit(cache=True, _nrt=False, error_model="numpy")
def _fmin_np(a, b):
    if a != a:
        return b
    if b != b:
        return a
    return a if a <= b else b


@njit(cache=True, _nrt=False, error_model="numpy")
def run_tape(op, arg, cval, s, e, X, P, D, reg):
    for t in range(s, e):
        o = op[t]
        i = t - s
        a = arg[t, 0]
        b = arg[t, 1]
        if o == 12:
            reg[i] = reg[a] * reg[b]
        elif o == 10:
            reg[i] = reg[a] + reg[b]
        elif o == 1:
            reg[i] = X[a]
        elif o == 0:
            reg[i] = cval[t]
        elif o == 2:
            reg[i] = P[a]
        elif o == 3:
            reg[i] = D[a]
        elif o == 11:
            reg[i] = reg[a] - reg[b]
        elif o == 13:
            reg[i] = reg[a] / reg[b]
        elif o == 14:
            reg[i] = -reg[a]
        elif o == 23:
            reg[i] = math.sin(reg[a])
        elif o == 24:
            reg[i] = math.cos(reg[a])
        elif o == 20:
            reg[i] = math.exp(reg[a])
        elif o == 21:
            v = reg[a]
            reg[i] = math.log(v) if v > 0.0 else (-np.inf if v == 0.0 else np.nan)
        elif o == 22:
            v = reg[a]
            reg[i] = math.sqrt(v) if v >= 0.0 else np.nan
        elif o == 15:
            reg[i] = reg[a] ** reg[b]
        elif o == 16:
            reg[i] = reg[a] ** cval[t]
        elif o == 25:
            reg[i] = math.tan(reg[a])
        elif o == 26:
            reg[i] = math.asin(reg[a])
        elif o == 27:
            reg[i] = math.acos(reg[a])
        elif o == 28:
            reg[i] = math.atan(reg[a])
        elif o == 29:
            reg[i] = math.sinh(reg[a])
        elif o == 30:
            reg[i] = math.cosh(reg[a])
        elif o == 31:
            reg[i] = math.tanh(reg[a])
        elif o == 32:
            reg[i] = abs(reg[a])
        elif o == 33:
            reg[i] = math.log10(reg[a])
        elif o == 34:
            reg[i] = math.expm1(reg[a])
        elif o == 35:
            reg[i] = math.log1p(reg[a])
        elif o == 36:
            reg[i] = math.erf(reg[a])
        elif o == 37:
            reg[i] = math.atan2(reg[a], reg[b])
        elif o == 38:
            reg[i] = math.hypot(reg[a], reg[b])
        elif o == 39:
            reg[i] = _fmin_np(reg[a], reg[b])
        elif o == 40:
            reg[i] = _fmax_np(reg[a], reg[b])
        elif o == 41:
            v = reg[a]
            reg[i] = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else v)
        elif o == 42:
            reg[i] = math.floor(reg[a])
        elif o == 43:
            reg[i] = math.ceil(reg[a])
        elif o == 44:
            reg[i] = math.asinh(reg[a])
        elif o == 45:
            reg[i] = math.acosh(reg[a])
        elif o == 46:
            reg[i] = math.atanh(reg[a])
        elif o == 50:
            reg[i] = 1.0 if reg[a] < reg[b] else 0.0
        elif o == 51:
            reg[i] = 1.0 if reg[a] <= reg[b] else 0.0
        elif o == 52:
            reg[i] = 1.0 if reg[a] > reg[b] else 0.0
        elif o == 53:
            reg[i] = 1.0 if reg[a] >= reg[b] else 0.0
        elif o == 54:
            reg[i] = 1.0 if reg[a] == reg[b] else 0.0
        elif o == 55:
            reg[i] = 1.0 if reg[a] != reg[b] else 0.0
        elif o == 56:
            reg[i] = 1.0 if (reg[a] != 0.0 and reg[b] != 0.0) else 0.0
        elif o == 57:
            reg[i] = 1.0 if (reg[a] != 0.0 or reg[b] != 0.0) else 0.0
        elif o == 58:
            reg[i] = 1.0 if reg[a] == 0.0 else 0.0
        elif o == 59:
            reg[i] = reg[b] if reg[a] != 0.0 else reg[arg[t, 2]]


@njit(cache=True, _nrt=False, error_model="numpy")
def _gather(E, k, i):
    """Instance i of group k: X, P, D into E's small buffers."""
    gt, x, p = E[0], E[19], E[20]
    vt, pt, dt = E[5], E[6], E[7]
    X, P, D = E[15], E[16], E[17]
    N = gt[k, 1]
    for a in range(gt[k, 2]):
        X[a] = x[vt[gt[k, 5] + a * N + i]]
    for a in range(gt[k, 3]):
        P[a] = p[pt[gt[k, 6] + a * N + i]]
    for a in range(gt[k, 4]):
        D[a] = dt[gt[k, 7] + a * N + i]


@njit(cache=True, _nrt=False, error_model="numpy")
def ev_zeroth(E, g_out):
    """f (returned) and g at E's x, p (set by ev_set)."""
    gt, op, arg, cval, outs, rows = E[0], E[1], E[2], E[3], E[4], E[8]
    reg, vbuf, term = E[14], E[18], E[22]
    ng, nobj = gt.shape[0], E[13][2]
    total = 0.0
    for k in range(ng):
        N = gt[k, 1]
        for i in range(N):
            _gather(E, k, i)
            run_tape(op, arg, cval, gt[k, 8], gt[k, 9], E[15], E[16], E[17], reg)
            v = reg[gt[k, 10]]
            if k < nobj:
                vbuf[i] = v
            elif gt[k, 22] == 1:
                g_out[rows[gt[k, 21] + i]] = v
            else:
                term[gt[k, 23] + i] = v
        if k < nobj:
            total += pairwise_sum(vbuf, 0, N)
    acc = E[11]
    if acc.shape[0] > 0:
        trow, tmp = E[10], E[24]
        for r in range(acc.shape[0]):
            tmp[acc[r]] = 0.0
        for j in range(trow.shape[0]):
            tmp[trow[j]] += term[j]
        for r in range(acc.shape[0]):
            g_out[acc[r]] = tmp[acc[r]]
    return total


@njit(cache=True, _nrt=False, error_model="numpy")
def ev_first(E, grad_out, jac_out):
    gt, op, arg, cval, outs = E[0], E[1], E[2], E[3], E[4]
    reg, gbuf, raw = E[14], E[21], E[23]
    ng, nobj, has_map = gt.shape[0], E[13][2], E[13][4]
    for k in range(ng):
        N = gt[k, 1]
        nj = gt[k, 14]
        if nj == 0:
            continue
        base, jo = gt[k, 19], gt[k, 13]
        for i in range(N):
            _gather(E, k, i)
            run_tape(op, arg, cval, gt[k, 11], gt[k, 12], E[15], E[16], E[17], reg)
            if k < nobj:
                for e in range(nj):
                    gbuf[base + e * N + i] = reg[outs[jo + e]]
            elif has_map == 1:
                for e in range(nj):
                    raw[base + e * N + i] = reg[outs[jo + e]]
            else:
                for e in range(nj):
                    jac_out[base + e * N + i] = reg[outs[jo + e]]
    gi = E[9]
    for j in range(grad_out.shape[0]):
        grad_out[j] = 0.0
    for j in range(gi.shape[0]):            # np.bincount: in buffer order
        grad_out[gi[j]] += gbuf[j]
    if has_map == 1:
        jm = E[12]
        for j in range(jac_out.shape[0]):
            jac_out[j] = 0.0
        for j in range(jm.shape[0]):
            jac_out[jm[j]] += raw[j]


@njit(cache=True, _nrt=False, error_model="numpy")
def ev_hess(E, lam, objf, hv_out):
    gt, op, arg, cval, outs, rows = E[0], E[1], E[2], E[3], E[4], E[8]
    reg = E[14]
    ng, nobj = gt.shape[0], E[13][2]
    for k in range(ng):
        N = gt[k, 1]
        nh = gt[k, 18]
        if nh == 0:
            continue
        base, ho = gt[k, 20], gt[k, 17]
        for i in range(N):
            w = objf if k < nobj else lam[rows[gt[k, 21] + i]]
            _gather(E, k, i)
            run_tape(op, arg, cval, gt[k, 15], gt[k, 16], E[15], E[16], E[17], reg)
            for e in range(nh):
                hv_out[base + e * N + i] = w * reg[outs[ho + e]]
