"""Evaluation of f, g, grad f, J and the Hessian of the Lagrangian by a generic tape
interpreter (the model is data: :mod:`caspar_backend.compiled.tape` builds the tapes).
"""
import math

import numpy as np

from ._jit import U, _f, _i, kernel
from .team import lane_share

#: columns of the group table ``gt`` (compiled.tape.G_COLS), read 1-D: gt[GROUP_COLUMNS *
#: k + c] is row k, column c (a 2-D view would reshape, which the CUDA build cannot cache);
#: likewise the tape arguments, arg[4 * t + j] (j = 3: the destination register)
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
def run_tape(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, C, reg, c0, c1):
    """Run tape entries ``ts:te`` for the instances ``i0 + c``, c0 <= c < c1, of a chunk
    of C of a group of N (a team's lane takes its share, :func:`lane_share`; one lane
    takes 0 .. C), register r of the chunk's instance ``i0 + c`` in ``reg[r C + c]``: each
    instruction is decoded once and applied to the C instances in order, its operands
    read from registers ``arg[4 t + j]`` (j < 3) and its result written to register
    ``arg[4 t + 3]`` (compiled/tape.py allocates them by liveness).  A leaf reads
    the instance's variable ``a`` as ``x[vt[vo + a N + i]]``, its parameter ``a`` as
    ``p[pt[po + a N + i]]``, its datum ``a`` as ``dt[do + a N + i]`` (the group's
    tables, column-major by instance).  Op codes: compiled/tape.py, tested in one chain,
    the most frequent first (on the CPU one chain was twice as fast as a two-level
    split).  Register and table offsets are unsigned (``U``): no negative-index test per
    access, and the chunk loops vectorize (the interpreter 2-3x faster on the CPU for Van
    der Pol)."""
    for t in range(ts, te):
        o = op[t]
        i = U(arg[4 * t + 3] * C)
        a = arg[4 * t + 0]
        b = arg[4 * t + 1]
        ra = U(a * C)
        rb = U(b * C)
        if o == 12:
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] * reg[rb + c]
        elif o == 10:
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] + reg[rb + c]
        elif o == 1:
            q = U(vo + a * N + i0)
            for c in range(U(c0), U(c1)):
                reg[i + c] = x[U(vt[q + c])]
        elif o == 4:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] * v
        elif o == 5:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] + v
        elif o == 0:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = v
        elif o == 14:
            for c in range(U(c0), U(c1)):
                reg[i + c] = -reg[ra + c]
        elif o == 11:
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] - reg[rb + c]
        elif o == 13:
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] / reg[rb + c]
        elif o == 2:
            q = U(po + a * N + i0)
            for c in range(U(c0), U(c1)):
                reg[i + c] = p[U(pt[q + c])]
        elif o == 3:
            q = U(do + a * N + i0)
            for c in range(U(c0), U(c1)):
                reg[i + c] = dt[q + c]
        elif o == 6:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] - v
        elif o == 7:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = v - reg[ra + c]
        elif o == 8:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] / v
        elif o == 9:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = v / reg[ra + c]
        elif o == 15:
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] ** reg[rb + c]
        elif o == 16:
            v = cval[t]
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[ra + c] ** v
        elif o == 24:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.cos(reg[ra + c])
        elif o == 23:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.sin(reg[ra + c])
        elif o == 20:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.exp(reg[ra + c])
        elif o == 21:
            for c in range(U(c0), U(c1)):
                v = reg[ra + c]
                reg[i + c] = math.log(v) if v > 0.0 else (-np.inf if v == 0.0 else np.nan)
        elif o == 22:
            for c in range(U(c0), U(c1)):
                v = reg[ra + c]
                reg[i + c] = math.sqrt(v) if v >= 0.0 else np.nan
        elif o == 25:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.tan(reg[ra + c])
        elif o == 26:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.asin(reg[ra + c])
        elif o == 27:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.acos(reg[ra + c])
        elif o == 28:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.atan(reg[ra + c])
        elif o == 29:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.sinh(reg[ra + c])
        elif o == 30:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.cosh(reg[ra + c])
        elif o == 31:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.tanh(reg[ra + c])
        elif o == 32:
            for c in range(U(c0), U(c1)):
                reg[i + c] = abs(reg[ra + c])
        elif o == 33:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.log10(reg[ra + c])
        elif o == 34:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.expm1(reg[ra + c])
        elif o == 35:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.log1p(reg[ra + c])
        elif o == 36:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.erf(reg[ra + c])
        elif o == 37:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.atan2(reg[ra + c], reg[rb + c])
        elif o == 38:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.hypot(reg[ra + c], reg[rb + c])
        elif o == 39:
            for c in range(U(c0), U(c1)):
                reg[i + c] = _fmin_np(reg[ra + c], reg[rb + c])
        elif o == 40:
            for c in range(U(c0), U(c1)):
                reg[i + c] = _fmax_np(reg[ra + c], reg[rb + c])
        elif o == 41:
            for c in range(U(c0), U(c1)):
                v = reg[ra + c]
                reg[i + c] = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else v)
        elif o == 42:
            for c in range(U(c0), U(c1)):
                v = reg[ra + c]
                # (math.floor is an int64: exact below 2^52; from there on every double
                # is an integer, and a NaN stays NaN as NumPy's floor gives)
                reg[i + c] = math.floor(v) if abs(v) < 4503599627370496.0 else v
        elif o == 43:
            for c in range(U(c0), U(c1)):
                v = reg[ra + c]
                reg[i + c] = math.ceil(v) if abs(v) < 4503599627370496.0 else v
        elif o == 44:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.asinh(reg[ra + c])
        elif o == 45:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.acosh(reg[ra + c])
        elif o == 46:
            for c in range(U(c0), U(c1)):
                reg[i + c] = math.atanh(reg[ra + c])
        elif o == 50:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] < reg[rb + c] else 0.0
        elif o == 51:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] <= reg[rb + c] else 0.0
        elif o == 52:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] > reg[rb + c] else 0.0
        elif o == 53:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] >= reg[rb + c] else 0.0
        elif o == 54:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] == reg[rb + c] else 0.0
        elif o == 55:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] != reg[rb + c] else 0.0
        elif o == 56:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if (reg[ra + c] != 0.0 and reg[rb + c] != 0.0) else 0.0
        elif o == 57:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if (reg[ra + c] != 0.0 or reg[rb + c] != 0.0) else 0.0
        elif o == 58:
            for c in range(U(c0), U(c1)):
                reg[i + c] = 1.0 if reg[ra + c] == 0.0 else 0.0
        elif o == 59:
            r3 = U(arg[4 * t + 2] * C)
            for c in range(U(c0), U(c1)):
                reg[i + c] = reg[rb + c] if reg[ra + c] != 0.0 else reg[r3 + c]


@kernel
def ev_zeroth_values(Fb, FO, Ib, IO, g_out, lane, lanes):
    """The groups' values at the x, p of slots F_X, F_P, a lane's share of each chunk
    (:func:`lane_share`, :func:`run_tape`): the objective groups' terms into slot
    F_OBJ_TERMS (group after group), the constraints' into their rows of ``g_out`` (m,)
    or, for rows summed from several terms, into F_CON_TERMS."""
    gt = _i(Ib, IO, I_GROUPS)
    op = _i(Ib, IO, I_TAPE_OP)
    arg = _i(Ib, IO, I_TAPE_ARG)
    cval = _f(Fb, FO, F_TAPE_CONST)
    rows = _i(Ib, IO, I_CON_ROWS)
    reg, vbuf, term = _f(Fb, FO, F_REGISTERS), _f(Fb, FO, F_OBJ_TERMS), _f(Fb, FO, F_CON_TERMS)
    x, p = _f(Fb, FO, F_X), _f(Fb, FO, F_P)
    vt, pt, dt = _i(Ib, IO, I_VAR_TABLE), _i(Ib, IO, I_PARAM_TABLE), _f(Fb, FO, F_DATA_TABLE)
    ng, nobj = gt.shape[0] // GROUP_COLUMNS, _i(Ib, IO, I_EVAL_SIZES)[EV_NOBJ]
    C = _i(Ib, IO, I_EVAL_SIZES)[EV_CHUNK]
    ob = 0
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 8], gt[GROUP_COLUMNS * k + 9]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        for i0 in range(0, N, C):
            nc = min(C, N - i0)
            c0, c1 = lane_share(nc, lane, lanes)
            run_tape(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, nc, reg,
                     c0, c1)
            for c in range(U(c0), U(c1)):
                i = i0 + c
                v = reg[U(gt[GROUP_COLUMNS * k + 10] * nc + c)]
                if k < nobj:
                    vbuf[U(ob + i)] = v
                elif gt[GROUP_COLUMNS * k + 22] == 1:
                    g_out[U(rows[U(gt[GROUP_COLUMNS * k + 21] + i)])] = v
                else:
                    term[U(gt[GROUP_COLUMNS * k + 23] + i)] = v
        if k < nobj:
            ob += N


@kernel
def ev_zeroth_sums(Fb, FO, Ib, IO, g_out):
    """f (returned: each objective group's terms summed as np.sum, the groups in order)
    and the rows of ``g_out`` summed from several terms, after :func:`ev_zeroth_values`."""
    gt = _i(Ib, IO, I_GROUPS)
    vbuf, term = _f(Fb, FO, F_OBJ_TERMS), _f(Fb, FO, F_CON_TERMS)
    nobj = _i(Ib, IO, I_EVAL_SIZES)[EV_NOBJ]
    total = 0.0
    ob = 0
    for k in range(nobj):
        N = gt[GROUP_COLUMNS * k + 1]
        total += pairwise_sum(vbuf, ob, N)
        ob += N
    acc = _i(Ib, IO, I_ACC_ROWS)
    if acc.shape[0] > 0:
        trow, tmp = _i(Ib, IO, I_TERM_ROWS), _f(Fb, FO, F_ROW_ACC)
        for r in range(acc.shape[0]):
            tmp[U(acc[r])] = 0.0
        for j in range(trow.shape[0]):
            tmp[U(trow[j])] += term[j]
        for r in range(acc.shape[0]):
            a = U(acc[r])
            g_out[a] = tmp[a]
    return total


@kernel
def ev_zeroth(Fb, FO, Ib, IO, g_out):
    """f (returned) and g (into ``g_out`` (m,)) at the x, p of slots F_X, F_P."""
    ev_zeroth_values(Fb, FO, Ib, IO, g_out, U(0), U(1))
    return ev_zeroth_sums(Fb, FO, Ib, IO, g_out)


@kernel
def ev_first_values(Fb, FO, Ib, IO, jac_out, lane, lanes):
    """The groups' first derivatives at F_X, F_P, a lane's share of each chunk
    (:func:`lane_share`): the objective's gradient terms into F_GRAD_BUF, the Jacobian's
    entries into ``jac_out`` or, where entries are summed (a jac_map), into F_JAC_RAW."""
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
    C = _i(Ib, IO, I_EVAL_SIZES)[EV_CHUNK]
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 11], gt[GROUP_COLUMNS * k + 12]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        nj = gt[GROUP_COLUMNS * k + 14]
        if nj == 0:
            continue
        base, jo = gt[GROUP_COLUMNS * k + 19], gt[GROUP_COLUMNS * k + 13]
        for i0 in range(0, N, C):
            nc = min(C, N - i0)
            c0, c1 = lane_share(nc, lane, lanes)
            run_tape(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, nc, reg,
                     c0, c1)
            for c in range(U(c0), U(c1)):
                i = i0 + c
                if k < nobj:
                    for e in range(nj):
                        gbuf[U(base + e * N + i)] = reg[U(outs[U(jo + e)] * nc + c)]
                elif has_map == 1:
                    for e in range(nj):
                        raw[U(base + e * N + i)] = reg[U(outs[U(jo + e)] * nc + c)]
                else:
                    for e in range(nj):
                        jac_out[U(base + e * N + i)] = reg[U(outs[U(jo + e)] * nc + c)]


@kernel
def ev_first_sums(Fb, FO, Ib, IO, grad_out, jac_out):
    """grad f into ``grad_out`` (n,) from the gradient terms (np.bincount's order), and
    the summed Jacobian entries into ``jac_out``, after :func:`ev_first_values`."""
    gbuf, raw = _f(Fb, FO, F_GRAD_BUF), _f(Fb, FO, F_JAC_RAW)
    gi = _i(Ib, IO, I_GRAD_IDX)
    for j in range(grad_out.shape[0]):
        grad_out[j] = 0.0
    for j in range(gi.shape[0]):            # np.bincount: in buffer order
        grad_out[U(gi[j])] += gbuf[j]
    if _i(Ib, IO, I_EVAL_SIZES)[EV_HAS_JAC_MAP] == 1:
        jm = _i(Ib, IO, I_JAC_MAP)
        for j in range(jac_out.shape[0]):
            jac_out[j] = 0.0
        for j in range(jm.shape[0]):
            jac_out[U(jm[j])] += raw[j]


@kernel
def ev_first(Fb, FO, Ib, IO, grad_out, jac_out):
    """grad f into ``grad_out`` (n,) and the Jacobian's values into ``jac_out`` at the
    x, p of slots F_X, F_P."""
    ev_first_values(Fb, FO, Ib, IO, jac_out, U(0), U(1))
    ev_first_sums(Fb, FO, Ib, IO, grad_out, jac_out)


@kernel
def ev_hess_values(Fb, FO, Ib, IO, lam, objf, hv_out, lane, lanes):
    """The Hessian of ``objf f + lam^T g`` at F_X, F_P into ``hv_out``, a lane's share
    of each chunk."""
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
    C = _i(Ib, IO, I_EVAL_SIZES)[EV_CHUNK]
    for k in range(ng):
        N = gt[GROUP_COLUMNS * k + 1]
        ts, te = gt[GROUP_COLUMNS * k + 15], gt[GROUP_COLUMNS * k + 16]
        vo, po, do = gt[GROUP_COLUMNS * k + 5], gt[GROUP_COLUMNS * k + 6], gt[GROUP_COLUMNS * k + 7]
        nh = gt[GROUP_COLUMNS * k + 18]
        if nh == 0:
            continue
        base, ho = gt[GROUP_COLUMNS * k + 20], gt[GROUP_COLUMNS * k + 17]
        for i0 in range(0, N, C):
            nc = min(C, N - i0)
            c0, c1 = lane_share(nc, lane, lanes)
            run_tape(op, arg, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, nc, reg,
                     c0, c1)
            for c in range(U(c0), U(c1)):
                i = i0 + c
                w = objf if k < nobj else lam[U(rows[U(gt[GROUP_COLUMNS * k + 21] + i)])]
                for e in range(nh):
                    hv_out[U(base + e * N + i)] = w * reg[U(outs[U(ho + e)] * nc + c)]


@kernel
def ev_hess(Fb, FO, Ib, IO, lam, objf, hv_out):
    """The Hessian of ``objf f + lam^T g`` at F_X, F_P into ``hv_out``."""
    ev_hess_values(Fb, FO, Ib, IO, lam, objf, hv_out, U(0), U(1))


# the compiled solve's evaluations: slots in, slots out, the groups' values a team job
# (:mod:`.team`)

@kernel
def zeroth_values(Fb, FO, Ib, IO):
    """:func:`ev_zeroth_values` into slot F_G, on one lane."""
    zeroth_values_part(Fb, FO, Ib, IO, U(0), U(1))


@kernel
def zeroth_values_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of :func:`zeroth_values`."""
    ev_zeroth_values(Fb, FO, Ib, IO, _f(Fb, FO, F_G), lane, lanes)


@kernel
def eval_zeroth(Fb, FO, Ib, IO):
    """f (returned) and g (slot F_G) at the x, p of slots F_X, F_P."""
    zeroth_values(Fb, FO, Ib, IO)
    return ev_zeroth_sums(Fb, FO, Ib, IO, _f(Fb, FO, F_G))


@kernel
def first_values(Fb, FO, Ib, IO):
    """:func:`ev_first_values` into slot F_JAC_VALS, on one lane."""
    first_values_part(Fb, FO, Ib, IO, U(0), U(1))


@kernel
def first_values_part(Fb, FO, Ib, IO, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of :func:`first_values`."""
    ev_first_values(Fb, FO, Ib, IO, _f(Fb, FO, F_JAC_VALS), lane, lanes)


@kernel
def eval_first(Fb, FO, Ib, IO):
    """grad f (slot F_GRAD_F) and the Jacobian's values (F_JAC_VALS) at F_X, F_P."""
    first_values(Fb, FO, Ib, IO)
    ev_first_sums(Fb, FO, Ib, IO, _f(Fb, FO, F_GRAD_F), _f(Fb, FO, F_JAC_VALS))


@kernel
def hess_values(Fb, FO, Ib, IO, objf, out_slot):
    """The Hessian of ``objf f + lam^T g`` (lam: slot F_LAMBDA) at F_X, F_P into float
    slot ``out_slot``, on one lane."""
    hess_values_part(Fb, FO, Ib, IO, objf, out_slot, U(0), U(1))


@kernel
def hess_values_part(Fb, FO, Ib, IO, objf, out_slot, lane, lanes):
    """Lane ``lane`` of ``lanes``'s share of :func:`hess_values`."""
    ev_hess_values(Fb, FO, Ib, IO, _f(Fb, FO, F_LAMBDA), objf, _f(Fb, FO, out_slot), lane,
                   lanes)
