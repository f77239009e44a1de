"""IPOPT's ``nlp_scaling_method = 'user-scaling'`` as a reference: CasADi's IPOPT (which
takes no user factors) on the user-scaled problem written out by hand,

    min df f(x~ / dx)  s.t.  dc gL' <= dc g(x~ / dx) <= dc gU',  dx xL' <= x~ <= dx xU',

``x~0 = dx x0``, where ``'`` marks IPOPT's relaxation of the bounds by
bound_relax_factor (done here, in the user's space, as IPOPT does before scaling; the
reference's own relaxation is off) and equality sides stay as they are.  Its answer
mapped back: ``x = x~ / dx``, ``f = f~ / df``, ``lam_x = dx lam_x~ / df``, ``lam_g =
dc lam_g~ / df``."""

from __future__ import annotations

import casadi as cs
import numpy as np

from tests.support import ipopt

BRF, CVT = 1e-8, 1e-4          # IPOPT's default bound_relax_factor, constr_viol_tol


def relaxed(b, sign):
    """IPOPT's relax_bounds: ``b + sign min(constr_viol_tol, brf max(1, |b|))`` on the
    finite entries of ``b``."""
    b = np.asarray(b, float)
    fin = np.isfinite(b)
    step = np.minimum(CVT, BRF * np.maximum(1.0, np.abs(np.where(fin, b, 0.0))))
    return np.where(fin, b + sign * step, b)


def ipopt_on_scaled(d, obj, dx, dc, options=None, start=None):
    """``(run, x, f, lam_x, lam_g)``: IPOPT on the scaled problem of the bank-style dict
    ``d`` (``x``, ``f``, ``g`` CasADi SX or None, ``x0``, ``lbx``, ``ubx``, ``lbg``,
    ``ubg``) with the factors ``obj``, ``dx`` (n,), ``dc`` (m,), all positive; the
    answer in the user's space (module doc).  ``start``: more of nlpsol's arguments
    (a warm start's ``lam_x0``, ``lam_g0``), in the scaled problem's space."""
    n = d["x"].numel()
    xs = cs.SX.sym("xs", n)
    x = xs / cs.DM(dx)
    nlp = {"x": xs, "f": obj * cs.substitute(d["f"], d["x"], x)}
    args = dict(x0=dx * np.asarray(d["x0"], float), lbx=dx * relaxed(d["lbx"], -1.0),
                ubx=dx * relaxed(d["ubx"], 1.0))
    has_g = d["g"] is not None
    if has_g:
        lbg, ubg = np.asarray(d["lbg"], float), np.asarray(d["ubg"], float)
        eq = lbg == ubg
        nlp["g"] = cs.DM(dc) * cs.substitute(cs.vec(d["g"]), d["x"], x)
        args["lbg"] = dc * np.where(eq, lbg, relaxed(lbg, -1.0))
        args["ubg"] = dc * np.where(eq, ubg, relaxed(ubg, 1.0))
    args.update(start or {})
    opts = dict(nlp_scaling_method="none", bound_relax_factor=0.0, **(options or {}))
    r = ipopt.solve(nlp, args, opts)
    return (r, r.x / dx, r.f / obj, r.lam_x * dx / obj,
            r.lam_g * dc / obj if has_g else r.lam_g)
