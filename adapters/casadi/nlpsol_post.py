"""casadi's post-processing of nlpsol solutions, for B of them at once.

With ``l(x, p) = f(x; p) + lam_g^T g(x; p)`` (casadi's sign convention) the options ask
for, per solution, in casadi's order (``Nlpsol::eval``):

* ``calc_lam_x``:  ``lam_x = -grad_x l``;
* ``calc_lam_p``:  ``lam_p = -grad_p l``  (NaN when off), at the solver's multipliers;
* ``bound_consistency``: casadi's ``Nlpsol::bound_consistency`` -- x and g clipped
  into their bounds, a multiplier kept only with the sign of the nearer finite bound;
* with ``detect_simple_bounds`` (:mod:`.simple_bounds`) the first and the third act on
  the problem the solver solved (its ``g`` without the simple rows, ``x`` with the merged
  bounds), as in casadi, and the results are then split back onto the user's rows; lam_p
  is the whole Lagrangian's (simple rows included: casadi's leaves them out).

:func:`finish_rows` takes the two gradients as functions: the single solve
(:meth:`NlpsolCore._finish <.frontend.NlpsolCore._finish>`) evaluates them with caspar's
evaluators (of the problem and of the problem lifted over ``(x, p)``), one point per
call; for B solutions (the default) they are one casadi Function of ``(x, p, lam_g)``
built once from the nlp's own expressions and evaluated on B columns in one call
(:class:`LagrangianGradients`: casadi's compiled virtual machine; an MX problem is
expanded to SX when it can be).  Both are exact derivatives of the same expressions:
they agree to rounding.  Arrays are float64, one row per solution.
"""

from __future__ import annotations

from typing import final

import numpy as np

import casadi as ca


def bound_consistency(z, lam, lb, ub):
    """casadi's ``Nlpsol::bound_consistency`` (elementwise, any shape): clip into the
    bounds; a multiplier may only have the sign of the nearer finite bound."""
    z = np.minimum(np.maximum(z, lb), ub)
    lam = lam.copy()
    both_inf = np.isinf(lb) & np.isinf(ub)
    near_up = ~both_inf & (np.isinf(lb) | (z - lb > ub - z))
    near_lo = ~both_inf & ~near_up & (np.isinf(ub) | (z - lb < ub - z))
    lam[both_inf] = 0.0
    lam[near_up] = np.maximum(0.0, lam[near_up])
    lam[near_lo] = np.minimum(0.0, lam[near_lo])
    return z, lam


@final
class LagrangianGradients:
    """``(x, p, lam_g) -> (grad_x l, grad_p l)`` of an nlp dict, for B points at once
    (final).  Built on first use from the dict's ``x``, ``p``, ``f``, ``g``."""

    def __init__(self, nlp: dict):
        self._nlp = nlp
        self._fn = None
        # the last point and its gradients: calc_lam_x and lam_p ask at the same one
        self._last = (None, None)

    def __call__(self, X, P, LG) -> tuple[np.ndarray, np.ndarray]:
        """``X`` (B, n), ``P`` (B, q), ``LG`` (B, m) -> (B, n), (B, q)."""
        key = tuple(np.ascontiguousarray(a, float).tobytes() + bytes(str(a.shape), "ascii")
                    for a in (X, P, LG))
        if self._last[0] == key:
            return self._last[1]
        fn = self._function()
        B = X.shape[0]
        # one casadi call on B columns: casadi evaluates the Function per column
        gx, gp = fn(X.T, P.T, LG.T)
        out = (np.array(gx, dtype=float).reshape(-1, B).T,
               np.array(gp, dtype=float).reshape(-1, B).T)
        self._last = (key, out)
        return out

    def prepare(self) -> None:
        """Build the Function now (a batch does before iterating)."""
        self._function()

    def _function(self) -> ca.Function:
        if self._fn is None:
            nlp = self._nlp
            x = nlp["x"]
            sym = type(x)
            p = nlp.get("p")
            p = p if p is not None else sym(0, 1)
            g = nlp.get("g")
            g = ca.vec(g) if g is not None else sym(0, 1)
            f = nlp.get("f")
            f = f if f is not None else sym(0)
            lam = sym.sym("lam_g", g.numel())
            lag = f + (ca.dot(lam, g) if g.numel() else 0)
            fn = ca.Function("lagrangian_gradients", [ca.vec(x), ca.vec(p), lam],
                             [ca.vec(ca.gradient(lag, x)), ca.vec(ca.gradient(lag, p))])
            if sym is ca.MX:
                try:
                    fn = fn.expand()
                except RuntimeError:
                    pass                # not expandable (e.g. a call): the MX VM
            self._fn = fn
        return self._fn


def finish_rows(core, X, G, LX, LG, P, LBX, UBX, LBG, UBG, merged=None, grad_x=None,
                grad_p=None) -> dict:
    """The post-processed outputs of B solutions of ``core`` (an
    :class:`~.frontend.NlpsolCore`, whose ``front`` options decide): ``x``, ``g``,
    ``lam_x``, ``lam_g``, ``lam_p`` as float64 (B, k) arrays.

    Inputs are the solver's: its solutions and bounds, of the problem it solved
    (``core.oracle``); ``merged`` the :class:`~.simple_bounds.Merged` data of the call
    when simple bounds were detected.  ``grad_x(X, P, LG)``: ``grad_x l`` of the
    solver's problem, ``grad_p(X, P, LG)``: ``grad_p l`` of the user's (full ``LG``);
    default: :class:`LagrangianGradients` of each."""
    X, G = np.asarray(X, float), np.asarray(G, float)
    LX, LG = np.asarray(LX, float), np.asarray(LG, float)
    B = X.shape[0]
    grad_x = grad_x or (lambda X_, P_, L_: core.oracle_gradients(X_, P_, L_)[0])
    grad_p = grad_p or (lambda X_, P_, L_: core.lagrangian_gradients(X_, P_, L_)[1])
    simple = core.simple if merged is not None else None
    lam_p = np.full((B, core.q), np.nan)
    if core.front["calc_lam_x"]:
        # the nlp's x is a vector or a dense matrix: vec order is the nonzero order
        LX = -grad_x(X, P, LG)
    if core.front["calc_lam_p"] and core.q:
        full = LG if simple is None else simple.split(merged, X, P, G, LX, LG)[2]
        lam_p = -grad_p(X, P, full)
    if core.front["bound_consistency"]:
        X, LX = bound_consistency(X, LX, LBX, UBX)
        G, LG = bound_consistency(G, LG, LBG, UBG)
    if simple is not None:
        G, LX, LG = simple.split(merged, X, P, G, LX, LG)
    return dict(x=X, g=G, lam_x=LX, lam_g=LG, lam_p=lam_p)
