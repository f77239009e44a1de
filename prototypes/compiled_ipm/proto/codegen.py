"""Option (1): straight-line scalar Python per template, generated from the same tapes
(one line per tape instruction, so the arithmetic is the interpreter's), compiled per
model by Numba (cache=True on a generated file)."""
from __future__ import annotations

from . import tape as T

_UN = {20: "math.exp({0})", 21: "_log({0})", 22: "_sqrt({0})", 23: "math.sin({0})",
       24: "math.cos({0})", 25: "math.tan({0})", 26: "math.asin({0})", 27: "math.acos({0})",
       28: "math.atan({0})", 29: "math.sinh({0})", 30: "math.cosh({0})", 31: "math.tanh({0})",
       32: "abs({0})", 33: "math.log10({0})", 34: "math.expm1({0})", 35: "math.log1p({0})",
       36: "math.erf({0})", 41: "_sign({0})", 42: "math.floor({0})", 43: "math.ceil({0})",
       44: "math.asinh({0})", 45: "math.acosh({0})", 46: "math.atanh({0})",
       58: "(1.0 if {0} == 0.0 else 0.0)"}
_BIN = {10: "{0} + {1}", 11: "{0} - {1}", 12: "{0} * {1}", 13: "{0} / {1}", 15: "{0} ** {1}",
        37: "math.atan2({0}, {1})", 38: "math.hypot({0}, {1})", 39: "_fmin_np({0}, {1})",
        40: "_fmax_np({0}, {1})", 50: "(1.0 if {0} < {1} else 0.0)",
        51: "(1.0 if {0} <= {1} else 0.0)", 52: "(1.0 if {0} > {1} else 0.0)",
        53: "(1.0 if {0} >= {1} else 0.0)", 54: "(1.0 if {0} == {1} else 0.0)",
        55: "(1.0 if {0} != {1} else 0.0)",
        56: "(1.0 if ({0} != 0.0 and {1} != 0.0) else 0.0)",
        57: "(1.0 if ({0} != 0.0 or {1} != 0.0) else 0.0)"}

HEADER = '''
# ---- evaluation by generated straight-line code (compiled per model) ---------------
import math

import numpy as np
from numba import njit


@njit(cache=True, _nrt=False, error_model="numpy")
def _fmax_np(a, b):
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
def _log(v):
    return math.log(v) if v > 0.0 else (-np.inf if v == 0.0 else np.nan)


@njit(cache=True, _nrt=False, error_model="numpy")
def _sqrt(v):
    return math.sqrt(v) if v >= 0.0 else np.nan


@njit(cache=True, _nrt=False, error_model="numpy")
def _sign(v):
    return 1.0 if v > 0.0 else (-1.0 if v < 0.0 else v)
'''


def _lines(model, s, e):
    op, arg, c = model["op"], model["arg"], model["cval"]
    out = []
    for t in range(s, e):
        i, o = t - s, int(op[t])
        a, b = int(arg[t, 0]), int(arg[t, 1])
        if o == T.CONST:
            ex = repr(float(c[t]))
        elif o == T.LOADX:
            ex = f"X[{a}]"
        elif o == T.LOADP:
            ex = f"P[{a}]"
        elif o == T.LOADD:
            ex = f"D[{a}]"
        elif o == T.NEG:
            ex = f"-r{a}"
        elif o == T.POWF:
            ex = f"r{a} ** {float(c[t])!r}"
        elif o == T.IF_ELSE:
            ex = f"r{b} if r{a} != 0.0 else r{int(arg[t, 2])}"
        elif o in _UN:
            ex = _UN[o].format(f"r{a}")
        elif o in _BIN:
            ex = _BIN[o].format(f"r{a}", f"r{b}")
        else:
            raise T.Unsupported(o)
        out.append(f"    r{i} = {ex}")
    return out


def generate(model) -> str:
    gt, outs = model["gt"], model["outs"]
    src = [HEADER]
    for k, r in enumerate(gt):
        src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")', f"def _val{k}(X, P, D):"]
        src += _lines(model, r[T.G_VS], r[T.G_VE])
        src.append(f"    return r{int(r[T.G_VOUT])}")
        if r[T.G_NJ]:
            src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")',
                    f"def _jac{k}(X, P, D, out, base, N, i):"]
            src += _lines(model, r[T.G_JS], r[T.G_JE])
            for e in range(int(r[T.G_NJ])):
                src.append(f"    out[base + {e} * N + i] = r{int(outs[r[T.G_JOUT] + e])}")
        if r[T.G_NH]:
            src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")',
                    f"def _hess{k}(X, P, D, w, out, base, N, i):"]
            src += _lines(model, r[T.G_HS], r[T.G_HE])
            for e in range(int(r[T.G_NH])):
                src.append(f"    out[base + {e} * N + i] = w * r{int(outs[r[T.G_HOUT] + e])}")
    nobj = model["nobj"]
    # ---- ev_zeroth
    src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")', "def _gather(E, k, i):",
            "    gt, x, p = E[0], E[19], E[20]",
            "    vt, pt, dt = E[5], E[6], E[7]",
            "    X, P, D = E[15], E[16], E[17]",
            "    N = gt[k, 1]",
            "    for a in range(gt[k, 2]):",
            "        X[a] = x[vt[gt[k, 5] + a * N + i]]",
            "    for a in range(gt[k, 3]):",
            "        P[a] = p[pt[gt[k, 6] + a * N + i]]",
            "    for a in range(gt[k, 4]):",
            "        D[a] = dt[gt[k, 7] + a * N + i]"]
    src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")', "def ev_zeroth(E, g_out):",
            "    gt, rows, vbuf, term = E[0], E[8], E[18], E[22]",
            "    X, P, D = E[15], E[16], E[17]",
            "    total = 0.0"]
    for k, r in enumerate(gt):
        src.append(f"    N = gt[{k}, 1]")
        src.append("    for i in range(N):")
        src.append(f"        _gather(E, {k}, i)")
        if k < nobj:
            src.append(f"        vbuf[i] = _val{k}(X, P, D)")
        elif r[T.G_DIRECT]:
            src.append(f"        g_out[rows[{int(r[T.G_ROFF])} + i]] = _val{k}(X, P, D)")
        else:
            src.append(f"        term[{int(r[T.G_TBASE])} + i] = _val{k}(X, P, D)")
        if k < nobj:
            src.append("    total += pairwise_sum(vbuf, 0, N)")
    src += ["    acc = E[11]",
            "    if acc.shape[0] > 0:",
            "        trow, tmp = E[10], E[24]",
            "        for r in range(acc.shape[0]):",
            "            tmp[acc[r]] = 0.0",
            "        for j in range(trow.shape[0]):",
            "            tmp[trow[j]] += term[j]",
            "        for r in range(acc.shape[0]):",
            "            g_out[acc[r]] = tmp[acc[r]]",
            "    return total"]
    # ---- ev_first
    src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")', "def ev_first(E, grad_out, jac_out):",
            "    gt, gbuf, raw = E[0], E[21], E[23]",
            "    X, P, D = E[15], E[16], E[17]"]
    for k, r in enumerate(gt):
        if not r[T.G_NJ]:
            continue
        dst = "gbuf" if k < nobj else ("raw" if model["has_jac_map"] else "jac_out")
        src += [f"    N = gt[{k}, 1]", "    for i in range(N):",
                f"        _gather(E, {k}, i)",
                f"        _jac{k}(X, P, D, {dst}, {int(r[T.G_JBASE])}, N, i)"]
    src += ["    gi = E[9]",
            "    for j in range(grad_out.shape[0]):",
            "        grad_out[j] = 0.0",
            "    for j in range(gi.shape[0]):",
            "        grad_out[gi[j]] += gbuf[j]"]
    if model["has_jac_map"]:
        src += ["    jm = E[12]",
                "    for j in range(jac_out.shape[0]):",
                "        jac_out[j] = 0.0",
                "    for j in range(jm.shape[0]):",
                "        jac_out[jm[j]] += raw[j]"]
    # ---- ev_hess
    src += ["", "", '@njit(cache=True, _nrt=False, error_model="numpy")', "def ev_hess(E, lam, objf, hv_out):",
            "    gt, rows = E[0], E[8]",
            "    X, P, D = E[15], E[16], E[17]"]
    for k, r in enumerate(gt):
        if not r[T.G_NH]:
            continue
        w = "objf" if k < nobj else f"lam[rows[{int(r[T.G_ROFF])} + i]]"
        src += [f"    N = gt[{k}, 1]", "    for i in range(N):",
                f"        _gather(E, {k}, i)",
                f"        _hess{k}(X, P, D, {w}, hv_out, {int(r[T.G_HBASE])}, N, i)"]
    src.append("    return None")
    return "\n".join(src) + "\n"
