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
* ``sum_log(s)``: sum_i log s_i
* ``max_prod(s, z)``: max_i s_i z_i (0 when empty)
* ``max_abs_shift(s, z, mu)``: max_i |s_i z_i - mu| (0 when empty)

Several reductions in one launch (:class:`~.fused_cuda.Reductions`: a tuple of 0-d
arrays, float64; ``|a|_inf`` is max_i |a_i|, 0 when empty; a minimum over nothing is
+inf; ``ftb(s, d)`` is -tau s / d where d < 0, +inf elsewhere):

* ``barrier_sums(sL, idampL, sU, idampU)``: (min(min sL, min sU), sum log sL,
  sum log sU, sum sL[idampL], sum sU[idampU]) -- the barrier function's slack terms
* ``step_reference(gphi, dw, w, h)``: (gphi^T dw, |dw|_inf, |dw / (1 + |w|)|_inf,
  sum |h|) -- the line search's reference values
* ``step_bounds(sL, iL, sU, iU, dw, zL, dzL, zU, dzU, tau)``: (min ftb(sL, dw[iL]),
  min ftb(sU, -dw[iU]), min ftb(zL, dzL), min ftb(zU, dzU)) -- the fraction-to-the-boundary
  minima of a step
* ``optimality_norms(rd, h, y, w, sL, zL, sU, zU, mu)``: (|rd|_inf, |h|_inf,
  max sL zL, max sU zU, |sL zL - mu|_inf, |sU zU - mu|_inf, sum zL, sum zU, sum |y|,
  |w|_inf) -- the convergence test's norms (products and sums 0 when empty)
* ``constr_viol(hv, slack, ws, wLs, wUs, enforced, dc, dci)``: with the inequality rows'
  bound violation v_k = max(wLs_k - g_k, g_k - wUs_k, 0), g_k = hv[slack_k] + ws_k:
  (max(max_k v_k, |hv[enforced]|_inf), max(max_k v_k / dci_k, max_e |hv_e| / dc_e))
  -- the scaled and the unscaled constraint violation (0 when empty; ``enforced`` the
  rows without a slack)
* ``finite_abs_sum(h)``: (all_i isfinite(h_i) as 1.0 or 0.0, sum |h|)
* ``total(a)``: (sum a,) -- the objective's terms (one column: no 0-d array made)
* ``trial_sums(h, sL, idampL, sU, idampU)``: finite_abs_sum's columns, then
  barrier_sums's -- a trial point's values in one launch
* ``reference_sums(gphi, dw, w, h, sL, idampL, sU, idampU, iL, iU, zL, dzL, zU, dzU,
  tau)``: step_reference's columns, barrier_sums's, step_bounds's -- the line search's
  reference values in one launch
* ``all_finite2(a, b)``: (all entries of a and b finite, as 1.0 or 0.0)
* ``amax_abs2(a, b)``: (|a|_inf, |b|_inf);  ``amax_abs3(a, b, c)``: (|a|_inf, |b|_inf,
  |c|_inf)

Elementwise (a new array, or in place in the last argument):

* ``gather_slacks(w, idx, b, nL)``: [w[idx] - b for the first nL entries, b - w[idx] for
  the others] (both slack vectors in one launch; nL as a float)
* ``gather_scale(a, idx, c, out)``: out <- c a[idx]
* ``neg_sum(a, b)``: -(a + b)
* ``bound_mult_step(mu, z, s, dw, idx, sign)``: (mu - z s - sign z dw[idx]) / s
* ``add_ratio(idx, num, s, out)``: out[idx] += num / s
* ``add_scaled(idx, c, v, out)``: out[idx] += c v
* ``add_barrier(idx, c1, s, c2, d, out)``: out[idx] += c1 / s + c2 d
* ``residual_static(b, kv, d, v)``: b - kv + d v
* ``clip_ratio(s, mu, ks, z)``: z <- min(max(z, mu / (ks s)), ks mu / s)

The next five are the former sequences of a copy or fill and indexed adds (scatters into
entries ``iL``, ``iU`` or ``slack``) as one kernel over the output's entries, each
finding its scatter source through an inverse map (``posL[j]`` = k where iL[k] = j, else
-1; ``posU``, ``pos`` likewise); the host runs the former sequence (the same bits):

* ``lagrangian_residual(g, aty, iL, zL, iU, zU, posL, posU)``: r = g + aty; r[iL] -= zL;
  r[iU] += zU
* ``barrier_gradient(g, iL, sL, dL, iU, sU, dU, c1L, c2L, c1U, c2U, posL, posU)``: r = a
  copy of g; r[iL] += c1L / sL + c2L dL; r[iU] += c1U / sU + c2U dU
* ``bound_sigma(iL, zL, sL, iU, zU, sU, posL, posU, sigma)``: sigma <- 0;
  sigma[iL] += zL / sL; sigma[iU] += zU / sU
* ``constraint_residual(dc, g, off, slack, ws, pos, out)``: out <- dc (g - off);
  out[slack] -= ws
* ``scale_pad(c, g, pad, out)``: out[:len(g)] <- c g, the rest ``pad``;
  ``mul_pad(a, b, pad, out)``: out[:len(a)] <- a b, the rest ``pad``
* ``step_duals(a, dy, az, dzL, sL, dzU, sU, mu, ks, clip, ok, y, zL, zU)``: where
  ``ok[0]`` is nonzero, y <- y + a dy, zL <- zL + az dzL, zU <- zU + az dzU, then where
  ``clip`` is nonzero ``clip_ratio(sL, mu, ks, zL)`` and ``clip_ratio(sU, mu, ks, zU)``;
  nothing where ``ok[0]`` is 0 (the multipliers' step of an accepted trial point, one
  launch for the three lengths; ``ok`` a float64 vector on the device -- the new
  point's derivatives' finiteness, not yet read back -- so that a step whose point
  turns out invalid leaves the multipliers as the host, which checks first, leaves them)
* ``axpy(a, x, y)``: y <- y + a x
* ``axpy_into(w, a, d, out)``: out <- w + a d
* ``gather_mul(v, y, idx, out)``: out <- v y[idx]
* ``scaled_shift(dc, g, off, out)``: out <- dc (g - off)
* ``scale_add(c, b, a)``: a <- c a + b
* ``private_ratio(jv, pe, sigma, pc, delta_w, out)``: out <- jv[pe]^2 /
  max(sigma[pc] + delta_w, 1e-30)
* ``concat_rhs(rw, rc, nw, m, b)``: b <- [rw, rc, 0] (nw, m the lengths of rw and rc,
  as floats)
* ``kkt_squares(hv, hoff, jv, sigma, nh, noff, nj, q)``: q <- [hv^2, hv[hoff]^2, jv^2,
  sigma^2] (nh, noff, nj the first three lengths, as floats)
* ``col_static_term(sigma, delta_w, eps, ew, dstat_w, diag_w)``: ew <- eps min(sqrt(ew),
  1), dstat_w <- ew, diag_w <- (sigma + delta_w) + ew
* ``row_static_term(priv, eps, delta_c, priv_on, ec, dstat_c, diag_c)``: ec <-
  max(min(eps min(ec, 1), priv) - delta_c, 0) (the min with priv only when priv_on is
  nonzero), dstat_c <- -ec, diag_c <- -ec - delta_c

The NumPy references are in :mod:`.fused_host`.

A solve's one-time setup (:mod:`.fused_setup`, in place): ``relax_bounds`` (the slack
problem's relaxed bounds), ``push_bounds`` (a start pushed inside them) and
``row_abs_max`` (the Jacobian's row norms of the gradient-based scaling).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import fused_cuda
from .fused_cuda import Elementwise, Reduction, Reductions, over
from .fused_setup import SETUP_OPS


@dataclass(frozen=True)
class FusedOp:
    """Final.  ``kernel``: the device kernel's spec (:class:`~.fused_cuda.Elementwise` or
    :class:`~.fused_cuda.Reduction`); ``reference``: the NumPy formula, called with the
    kernel's arguments (in-place outputs last, modified)."""

    kernel: Elementwise | Reduction | Reductions
    reference: Callable


from .fused_host import (  # noqa: F401 (the references of OPS)
    _max_reduce, _min_reduce, _sum_reduce, _max_or_zero, _add_scaled, _clip_ratio,
    _all_finite, _ftb_min, _bound_mult_step, _add_ratio, _add_barrier, _amax_abs,
    _barrier_sums, _step_reference, _step_bounds, _optimality_norms, _constr_viol,
    _finite_abs_sum, _all_finite2, _axpy, _axpy_into, _gather_mul, _scaled_shift,
    _scale_add, _private_ratio, _concat_rhs, _gather_slacks, _gather_scale, _kkt_squares,
    _col_static_term, _row_static_term, _lagrangian_residual, _barrier_gradient,
    _bound_sigma, _constraint_residual, _scale_pad, _mul_pad, _reference_sums, _step_duals)


def _ftb(s, d):
    """C: the fraction-to-the-boundary ratio of slack ``s`` and step ``d``."""
    return f"({d}) < 0 ? -tau * ({s}) / ({d}) : CASPAR_INF"


_INF, _FIN = "CASPAR_INF", "(CASPAR_FINITE({0}) ? 1.0 : 0.0)"
#: C: the bound violation v_k of ``constr_viol`` (a NaN propagates, as NumPy's maximum)
_VIOL = ("CASPAR_MAX(CASPAR_MAX(wLs[i] - (hv[slack[i]] + ws[i]), "
         "(hv[slack[i]] + ws[i]) - wUs[i]), 0.0)")


def _amax(name):
    return (over(name, f"fabs({name}[i])", "0.0"), "max", "0.0")


def _sum(name, expr):
    return (over(name, expr, "0.0"), "sum", "0.0")


OPS = {
    "amax_abs": FusedOp(Reduction("vec a", "fabs(a[i])", "max", "0.0"),
                        lambda a: _max_or_zero(np.abs(a))),
    "all_finite": FusedOp(Reduction("vec v", "CASPAR_FINITE(v[i]) ? 1.0 : 0.0", "min", "1.0",
                                    "bool"), _all_finite),
    "sum_log": FusedOp(Reduction("vec s", "log(s[i])", "sum", "0.0"),
                       lambda s: _sum_reduce(np.log(s))),
    "max_prod": FusedOp(Reduction("vec s, vec z", "s[i] * z[i]", "max", "0.0"),
                        lambda s, z: _max_or_zero(s * z)),
    "max_abs_shift": FusedOp(Reduction("vec s, vec z, scalar mu", "fabs(s[i] * z[i] - mu)",
                                       "max", "0.0"),
                             lambda s, z, mu: _max_or_zero(np.abs(s * z - mu))),
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
    "barrier_sums": FusedOp(Reductions("vec sL, idx idampL, vec sU, idx idampU", (
        ("CASPAR_MIN(%s, %s)" % (over("sL", "sL[i]", _INF), over("sU", "sU[i]", _INF)),
         "min", _INF),
        _sum("sL", "log(sL[i])"), _sum("sU", "log(sU[i])"),
        _sum("idampL", "sL[idampL[i]]"), _sum("idampU", "sU[idampU[i]]"))), _barrier_sums),
    "step_reference": FusedOp(Reductions("vec gphi, vec dw, vec w, vec h", (
        _sum("dw", "gphi[i] * dw[i]"), _amax("dw"),
        (over("dw", "fabs(dw[i] / (1.0 + fabs(w[i])))", "0.0"), "max", "0.0"),
        _sum("h", "fabs(h[i])"))), _step_reference),
    "step_bounds": FusedOp(Reductions(
        "vec sL, idx iL, vec sU, idx iU, raw dw, vec zL, vec dzL, vec zU, vec dzU, "
        "scalar tau", (
            (over("sL", _ftb("sL[i]", "dw[iL[i]]"), _INF), "min", _INF),
            (over("sU", _ftb("sU[i]", "-dw[iU[i]]"), _INF), "min", _INF),
            (over("zL", _ftb("zL[i]", "dzL[i]"), _INF), "min", _INF),
            (over("zU", _ftb("zU[i]", "dzU[i]"), _INF), "min", _INF))), _step_bounds),
    "optimality_norms": FusedOp(Reductions(
        "vec rd, vec h, vec y, vec w, vec sL, vec zL, vec sU, vec zU, scalar mu", (
            _amax("rd"), _amax("h"),
            (over("sL", "sL[i] * zL[i]", "0.0"), "max", "0.0"),
            (over("sU", "sU[i] * zU[i]", "0.0"), "max", "0.0"),
            (over("sL", "fabs(sL[i] * zL[i] - mu)", "0.0"), "max", "0.0"),
            (over("sU", "fabs(sU[i] * zU[i] - mu)", "0.0"), "max", "0.0"),
            _sum("zL", "zL[i]"), _sum("zU", "zU[i]"), _sum("y", "fabs(y[i])"),
            _amax("w"))), _optimality_norms),
    "constr_viol": FusedOp(Reductions(
        "vec hv, idx slack, vec ws, vec wLs, vec wUs, idx enforced, vec dc, vec dci", (
            ("CASPAR_MAX(%s, %s)" % (over("slack", _VIOL, "0.0"),
                                     over("enforced", "fabs(hv[enforced[i]])", "0.0")),
             "max", "0.0"),
            ("CASPAR_MAX(%s, %s)" % (over("slack", f"{_VIOL} / dci[i]", "0.0"),
                                     over("enforced", "fabs(hv[enforced[i]]) / "
                                          "dc[enforced[i]]", "0.0")),
             "max", "0.0"))), _constr_viol),
    "finite_abs_sum": FusedOp(Reductions("vec h", (
        (over("h", _FIN.format("h[i]"), "1.0"), "min", "1.0"),
        _sum("h", "fabs(h[i])"))), _finite_abs_sum),
    "total": FusedOp(Reductions("vec a", (_sum("a", "a[i]"),)),
                     lambda a: (_sum_reduce(a),)),
    "all_finite2": FusedOp(Reductions("vec a, vec b", (
        ("CASPAR_MIN(%s, %s)" % (over("a", _FIN.format("a[i]"), "1.0"),
                                 over("b", _FIN.format("b[i]"), "1.0")), "min", "1.0"),)),
        _all_finite2),
    "amax_abs2": FusedOp(Reductions("vec a, vec b", (_amax("a"), _amax("b"))),
                         lambda a, b: (_amax_abs(a), _amax_abs(b))),
    "amax_abs3": FusedOp(Reductions("vec a, vec b, vec c", (_amax("a"), _amax("b"),
                                                            _amax("c"))),
                         lambda a, b, c: (_amax_abs(a), _amax_abs(b), _amax_abs(c))),
    "axpy": FusedOp(Elementwise("scalar a, vec x, inout y", "y[i] += a * x[i]", "x"), _axpy),
    "lagrangian_residual": FusedOp(Elementwise(
        "vec g, vec aty, idx iL, raw zL, idx iU, raw zU, idx posL, idx posU",
        "double v = g[i] + aty[i]; const long long a = posL[i], b = posU[i]; "
        "if (a >= 0) v -= zL[a]; if (b >= 0) v += zU[b]; r[i] = v", "g", "r"),
        _lagrangian_residual),
    "barrier_gradient": FusedOp(Elementwise(
        "vec g, idx iL, raw sL, raw dL, idx iU, raw sU, raw dU, scalar c1L, scalar c2L, "
        "scalar c1U, scalar c2U, idx posL, idx posU",
        "double v = g[i]; const long long a = posL[i], b = posU[i]; "
        "if (a >= 0) v += c1L / sL[a] + c2L * dL[a]; "
        "if (b >= 0) v += c1U / sU[b] + c2U * dU[b]; r[i] = v", "g", "r"),
        _barrier_gradient),
    "bound_sigma": FusedOp(Elementwise(
        "idx iL, raw zL, raw sL, idx iU, raw zU, raw sU, idx posL, idx posU, inout sigma",
        "double v = 0.0; const long long a = posL[i], b = posU[i]; "
        "if (a >= 0) v += zL[a] / sL[a]; if (b >= 0) v += zU[b] / sU[b]; sigma[i] = v",
        "sigma"), _bound_sigma),
    "constraint_residual": FusedOp(Elementwise(
        "vec dc, vec g, vec off, idx slack, raw ws, idx pos, inout out",
        # (the product rounded on its own, as the two former kernels did: no FMA)
        "double v = __dmul_rn(dc[i], g[i] - off[i]); const long long p = pos[i]; "
        "if (p >= 0) v -= ws[p]; out[i] = v", "out"), _constraint_residual),
    "scale_pad": FusedOp(Elementwise(
        "scalar c, vec g, scalar pad, inout out",
        "out[i] = i < n_g ? c * g[i] : pad", "out g"), _scale_pad),
    "mul_pad": FusedOp(Elementwise(
        "vec a, vec b, scalar pad, inout out",
        "out[i] = i < n_a ? a[i] * b[i] : pad", "out a"), _mul_pad),
    "step_duals": FusedOp(Elementwise(
        "scalar a, vec dy, scalar az, vec dzL, vec sL, vec dzU, vec sU, scalar mu, "
        "scalar ks, scalar clip, raw ok, inout y, inout zL, inout zU",
        "if (ok[0] == 0.0) break; "
        "if (i < n_y) y[i] += a * dy[i]; "
        "if (i < n_zL) { double z = zL[i] + az * dzL[i]; if (clip != 0.0) "
        "z = fmin(fmax(z, mu / (ks * sL[i])), ks * mu / sL[i]); zL[i] = z; } "
        "if (i < n_zU) { double z = zU[i] + az * dzU[i]; if (clip != 0.0) "
        "z = fmin(fmax(z, mu / (ks * sU[i])), ks * mu / sU[i]); zU[i] = z; }",
        "y zL zU"), _step_duals),
    "axpy_into": FusedOp(Elementwise("vec w, scalar a, vec d, inout out",
                                     "out[i] = w[i] + a * d[i]", "w"), _axpy_into),
    "gather_mul": FusedOp(Elementwise("vec v, raw y, idx idx, inout out",
                                      "out[i] = v[i] * y[idx[i]]", "v"), _gather_mul),
    "scaled_shift": FusedOp(Elementwise("vec dc, vec g, vec off, inout out",
                                        "out[i] = dc[i] * (g[i] - off[i])", "g"),
                            _scaled_shift),
    "scale_add": FusedOp(Elementwise("scalar c, vec b, inout a", "a[i] = a[i] * c + b[i]",
                                     "b"), _scale_add),
    "private_ratio": FusedOp(Elementwise(
        "raw jv, idx pe, raw sigma, idx pc, scalar delta_w, inout out",
        "const double v = jv[pe[i]]; "
        "out[i] = v * v / CASPAR_MAX(sigma[pc[i]] + delta_w, 1e-30)", "pe"), _private_ratio),
    "gather_slacks": FusedOp(Elementwise(
        "raw w, idx idx, vec b, scalar nL",
        "s[i] = i < (long long)nL ? w[idx[i]] - b[i] : b[i] - w[idx[i]]", "b", "s"),
        _gather_slacks),
    "gather_scale": FusedOp(Elementwise("raw a, idx idx, scalar c, inout out",
                                        "out[i] = a[idx[i]] * c", "idx"), _gather_scale),
    "neg_sum": FusedOp(Elementwise("vec a, vec b", "r[i] = -(a[i] + b[i])", "a", "r"),
                       lambda a, b: -(a + b)),
    "concat_rhs": FusedOp(Elementwise(
        "raw rw, raw rc, scalar nw, scalar m, inout b",
        "const long long a = (long long)nw, c = a + (long long)m; "
        "b[i] = i < a ? rw[i] : i < c ? rc[i - a] : 0.0", "b"), _concat_rhs),
    "kkt_squares": FusedOp(Elementwise(
        "raw hv, idx hoff, raw jv, raw sigma, scalar nh, scalar noff, scalar nj, inout q",
        "const long long a = (long long)nh, b = a + (long long)noff, "
        "c = b + (long long)nj; "
        "const double v = i < a ? hv[i] : i < b ? hv[hoff[i - a]] : i < c ? jv[i - b] "
        ": sigma[i - c]; q[i] = v * v", "q"), _kkt_squares),
    "col_static_term": FusedOp(Elementwise(
        "vec sigma, scalar delta_w, scalar eps, inout ew, inout dstat_w, inout diag_w",
        "const double e = CASPAR_MIN(sqrt(ew[i]), 1.0) * eps; "
        "ew[i] = e; dstat_w[i] = e; diag_w[i] = (sigma[i] + delta_w) + e", "sigma"),
        _col_static_term),
    "row_static_term": FusedOp(Elementwise(
        "vec priv, scalar eps, scalar delta_c, scalar priv_on, inout ec, inout dstat_c, "
        "inout diag_c",
        "double e = CASPAR_MIN(ec[i], 1.0) * eps; "
        "if (priv_on != 0.0) e = CASPAR_MIN(e, priv[i]); "
        "e = CASPAR_MAX(e - delta_c, 0.0); "
        "ec[i] = e; dstat_c[i] = -e; diag_c[i] = -e - delta_c", "ec"), _row_static_term),
}

# reductions over the same iterate read together: one launch, the columns of the ops
# they join in order (their parameters share names where they are the same vector)
OPS["trial_sums"] = FusedOp(Reductions(
    "vec h, vec sL, idx idampL, vec sU, idx idampU",
    OPS["finite_abs_sum"].kernel.columns + OPS["barrier_sums"].kernel.columns),
    lambda h, sL, idampL, sU, idampU: (_finite_abs_sum(h)
                                       + _barrier_sums(sL, idampL, sU, idampU)))
OPS["reference_sums"] = FusedOp(Reductions(
    "vec gphi, vec dw, vec w, vec h, vec sL, idx idampL, vec sU, idx idampU, idx iL, "
    "idx iU, vec zL, vec dzL, vec zU, vec dzU, scalar tau",
    OPS["step_reference"].kernel.columns + OPS["barrier_sums"].kernel.columns
    + OPS["step_bounds"].kernel.columns), _reference_sums)

OPS.update({name: FusedOp(*op) for name, op in SETUP_OPS.items()})

#: the specs, the table :mod:`.fused_cuda` compiles
SPECS = {name: op.kernel for name, op in OPS.items()}

_REFERENCE = {name: op.reference for name, op in OPS.items()}

#: ops whose result is an output argument (in place): skipped for empty index sets,
#: where a kernel has no size to launch with
IN_PLACE = ("add_ratio", "add_scaled", "add_barrier", "clip_ratio", "axpy", "axpy_into",
            "step_duals", "bound_sigma", "constraint_residual", "scale_pad", "mul_pad",
            "gather_mul", "gather_scale", "scaled_shift", "scale_add", "private_ratio", "concat_rhs",
            "kkt_squares", "col_static_term", "row_static_term", "relax_bounds",
            "push_bounds", "row_abs_max")
_IN_PLACE = frozenset(IN_PLACE)
#: the position of an in-place op's size argument (its kernel's ``size``)
_SIZE_ARG = {name: tuple([p.split()[1] for p in OPS[name].kernel.params.split(",")]
                         .index(q) for q in OPS[name].kernel.sizes()) for name in IN_PLACE}


def call(xp, name, *args):
    """``OPS[name]`` on ``args``: the NumPy reference on the host, the kernel on the
    device (one launch).  In-place ops return None, a :class:`~.fused_cuda.Reductions`
    op a tuple of 0-d arrays (one per column)."""
    if xp is np:                    # is_host, inlined: the hot path of every op
        return _REFERENCE[name](*args)
    in_place = name in _IN_PLACE
    if in_place:
        at = _SIZE_ARG[name]
        if len(at) == 1:
            if not (args[-1].size and args[at[0]].size):
                return None
        elif not any(args[j].size for j in at):     # each output guarded by its size
            return None
    m = fused_cuda.module(xp, SPECS)
    if not m.contiguous(name, args):
        if in_place:
            raise ValueError(f"fused op {name}: the arrays must be contiguous")
        args = tuple(xp.ascontiguousarray(a) if hasattr(a, "flags") else a for a in args)
    return m.launch(name, args)


def amax_abs(xp, a):
    """max |a| as a 0-d array (0.0 for an empty ``a``): ``OPS['amax_abs']`` (on the host
    its reference inlined: the most frequent reduction of an iteration)."""
    if xp is np:
        return _max_reduce(np.abs(a)) if a.size else np.zeros(())
    return call(xp, "amax_abs", a)
