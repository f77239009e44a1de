"""Evaluation of f, g, grad f, J and the Hessian of the Lagrangian by a generic tape
interpreter (the model is data: :mod:`caspar_backend.compiled.tape` builds the tapes).
"""
import math

import numpy as np

from ._jit import _f, _i, kernel

#: columns of the group table ``gt`` (compiled.tape.G_COLS), read 1-D: gt[GROUP_COLUMNS *
#: k + c] is row k, column c (a 2-D view would reshape, which the CUDA build cannot cache);
#: likewise the tape arguments, arg[3 * t + j]
GROUP_COLUMNS = 24
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)
from .pairwise import pairwise_sum


@kernel
def _fmax_np(a, b):      # np.fmax: NaN-ignoring
    if a != a:
        return b
    if b != b:
        return a
    return a if a >= b else b


@kernel
def _fmin_np(a, b):
    if a != a:
        return b
    if b != b:
        return a
    return a if a <= b else b


@kernel
def run_tape(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, reg):
    """Run tape entries ``ts:te`` into ``reg`` for one instance of a group of N: its
    variable ``a`` is ``x[vt[vo + a N]]``, its parameter ``a`` ``p[pt[po + a N]]``, its
    datum ``a`` ``dt[do + a N]`` (the group's tables, column-major by instance, offset
    by the instance)."""
    for t in range(ts, te):
        o = op[t]
        i = t - ts
        a = arg[3 * t + 0]
        b = arg[3 * t + 1]
        if o == 12:
            reg[i] = reg[a] * reg[b]
        elif o == 10:
            reg[i] = reg[a] + reg[b]
        elif o == 4:
            reg[i] = reg[a] * cval[t]
        elif o == 5:
            reg[i] = reg[a] + cval[t]
        elif o == 1:
            reg[i] = x[vt[vo + a * N]]
        elif o == 0:
            reg[i] = cval[t]
        elif o == 2:
            reg[i] = p[pt[po + a * N]]
        elif o == 3:
            reg[i] = dt[do + a * N]
        elif o == 11:
            reg[i] = reg[a] - reg[b]
        elif o == 13:
            reg[i] = reg[a] / reg[b]
        elif o == 6:
            reg[i] = reg[a] - cval[t]
        elif o == 7:
            reg[i] = cval[t] - reg[a]
        elif o == 8:
            reg[i] = reg[a] / cval[t]
        elif o == 9:
            reg[i] = cval[t] / reg[a]
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
            reg[i] = reg[b] if reg[a] != 0.0 else reg[arg[3 * t + 2]]


@kernel
def ev_zeroth(Fb, FO, Ib, IO, g_out):
    """f (returned) and g (into ``g_out`` (m,)) at the x, p of slots F_X, F_P."""
    gt = _i(Ib, IO, I_GROUPS)
    op = _i(Ib, IO, I_TAPE_OP)
    arg = _i(Ib, IO, I_TAPE_ARG)
    cval = _f(Fb, FO, F_TAPE_CONST)
    rows = _i(Ib, IO, I_CON_ROWS)
    reg, vbuf, term = _f(Fb, FO, F_REGISTERS), _f(Fb, FO, F_OBJ_TERMS), _f(Fb, FO, F_CON_TERMS)
    x, p = _f(Fb, FO, F_X), _f(Fb, FO, F_P)
    vt, pt, dt = _i(Ib, IO, I_VAR_TABLE), _i(Ib, IO, I_PARAM_TABLE), _f(Fb, FO, F_DATA_TABLE)
    ng, nobj = gt.shape[0] // GROUP_COLUMNS, _i(Ib, IO, I_EVAL_SIZES)[EV_NOBJ]
    total = 0.0
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 8], gt[GROUP_COLUMNS * k + 9]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        for i in range(N):
            run_tape(op, arg, cval, ts, te, x, vt, vo + i, p, pt, po + i, dt, do + i, N, reg)
            v = reg[gt[GROUP_COLUMNS * k + 10]]
            if k < nobj:
                vbuf[i] = v
            elif gt[GROUP_COLUMNS * k + 22] == 1:
                g_out[rows[gt[GROUP_COLUMNS * k + 21] + i]] = v
            else:
                term[gt[GROUP_COLUMNS * k + 23] + i] = v
        if k < nobj:
            total += pairwise_sum(vbuf, 0, N)
    acc = _i(Ib, IO, I_ACC_ROWS)
    if acc.shape[0] > 0:
        trow, tmp = _i(Ib, IO, I_TERM_ROWS), _f(Fb, FO, F_ROW_ACC)
        for r in range(acc.shape[0]):
            tmp[acc[r]] = 0.0
        for j in range(trow.shape[0]):
            tmp[trow[j]] += term[j]
        for r in range(acc.shape[0]):
            g_out[acc[r]] = tmp[acc[r]]
    return total


@kernel
def ev_first(Fb, FO, Ib, IO, grad_out, jac_out):
    gt = _i(Ib, IO, I_GROUPS)
    op = _i(Ib, IO, I_TAPE_OP)
    arg = _i(Ib, IO, I_TAPE_ARG)
    cval = _f(Fb, FO, F_TAPE_CONST)
    outs = _i(Ib, IO, I_TAPE_OUT)
    reg, gbuf, raw = _f(Fb, FO, F_REGISTERS), _f(Fb, FO, F_GRAD_BUF), _f(Fb, FO, F_JAC_RAW)
    x, p = _f(Fb, FO, F_X), _f(Fb, FO, F_P)
    vt, pt, dt = _i(Ib, IO, I_VAR_TABLE), _i(Ib, IO, I_PARAM_TABLE), _f(Fb, FO, F_DATA_TABLE)
    ng = gt.shape[0] // GROUP_COLUMNS
    nobj = _i(Ib, IO, I_EVAL_SIZES)[EV_NOBJ]
    has_map = _i(Ib, IO, I_EVAL_SIZES)[EV_HAS_JAC_MAP]
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 11], gt[GROUP_COLUMNS * k + 12]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        nj = gt[GROUP_COLUMNS * k + 14]
        if nj == 0:
            continue
        base, jo = gt[GROUP_COLUMNS * k + 19], gt[GROUP_COLUMNS * k + 13]
        for i in range(N):
            run_tape(op, arg, cval, ts, te, x, vt, vo + i, p, pt, po + i, dt, do + i, N, reg)
            if k < nobj:
                for e in range(nj):
                    gbuf[base + e * N + i] = reg[outs[jo + e]]
            elif has_map == 1:
                for e in range(nj):
                    raw[base + e * N + i] = reg[outs[jo + e]]
            else:
                for e in range(nj):
                    jac_out[base + e * N + i] = reg[outs[jo + e]]
    gi = _i(Ib, IO, I_GRAD_IDX)
    for j in range(grad_out.shape[0]):
        grad_out[j] = 0.0
    for j in range(gi.shape[0]):            # np.bincount: in buffer order
        grad_out[gi[j]] += gbuf[j]
    if has_map == 1:
        jm = _i(Ib, IO, I_JAC_MAP)
        for j in range(jac_out.shape[0]):
            jac_out[j] = 0.0
        for j in range(jm.shape[0]):
            jac_out[jm[j]] += raw[j]


@kernel
def ev_hess(Fb, FO, Ib, IO, lam, objf, hv_out):
    gt = _i(Ib, IO, I_GROUPS)
    op = _i(Ib, IO, I_TAPE_OP)
    arg = _i(Ib, IO, I_TAPE_ARG)
    cval = _f(Fb, FO, F_TAPE_CONST)
    outs = _i(Ib, IO, I_TAPE_OUT)
    rows = _i(Ib, IO, I_CON_ROWS)
    reg = _f(Fb, FO, F_REGISTERS)
    x, p = _f(Fb, FO, F_X), _f(Fb, FO, F_P)
    vt, pt, dt = _i(Ib, IO, I_VAR_TABLE), _i(Ib, IO, I_PARAM_TABLE), _f(Fb, FO, F_DATA_TABLE)
    ng, nobj = gt.shape[0] // GROUP_COLUMNS, _i(Ib, IO, I_EVAL_SIZES)[EV_NOBJ]
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 15], gt[GROUP_COLUMNS * k + 16]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        nh = gt[GROUP_COLUMNS * k + 18]
        if nh == 0:
            continue
        base, ho = gt[GROUP_COLUMNS * k + 20], gt[GROUP_COLUMNS * k + 17]
        for i in range(N):
            w = objf if k < nobj else lam[rows[gt[GROUP_COLUMNS * k + 21] + i]]
            run_tape(op, arg, cval, ts, te, x, vt, vo + i, p, pt, po + i, dt, do + i, N, reg)
            for e in range(nh):
                hv_out[base + e * N + i] = w * reg[outs[ho + e]]
