"""``detect_simple_bounds``: constraints linear in one variable become bounds on it.

casadi's rule (``construct_nlpsol`` and ``casadi_nlpsol_detect_bounds_*``, casadi 3.8):
constraint ``i`` is *simple* when its Jacobian row has exactly one structural nonzero,
in column ``j``, and ``g_i`` does not depend nonlinearly on ``x``; then

    g_i(x; p) = a_i(p) x_j + c_i(p),

and ``lbg_i <= g_i <= ubg_i`` is the bound ``(lbg_i - c_i)/a_i <= x_j <= (ubg_i -
c_i)/a_i`` (sides swapped when ``a_i < 0``).  The solver sees the other constraints only;
``x_j``'s bounds are the tightest of its own and of its simple rows.  casadi computes
``a_i`` and ``b_i = g_i(x0; p)`` per call and the bound as ``(lbg_i - b_i)/a_i + x0_j``;
caspar uses the same formula (the same rounding, so the same problem reaches the
solver).  A side that is tied keeps the first source: ``x_j``'s own bound, else the
first simple row attaining it.

Back in the user's space, each side's multiplier goes where the side came from: the
solver's ``lam_x_j`` splits into its negative part (lower side) and positive part
(upper side); a side from row ``i`` becomes ``lam_g_i = lam / a_i`` (the chain rule:
``d g_i / d x_j = a_i``), a side of ``x_j``'s own stays in ``lam_x_j``; the other rows
keep the solver's ``lam_g``.  This is casadi's split.

Where caspar departs from casadi 3.8, on purpose:

* ``g`` of a simple row is ``g_i`` at the returned x (casadi returns
  ``a_i x_j - b_i + x0_j``, which is ``g_i`` only when ``a_i = 1`` and ``c_i = 0``);
* ``lam_p`` is ``-grad_p`` of the whole Lagrangian, simple rows included (casadi's
  leaves out the rows' dependence on p);
* warm-start multipliers of a side from row ``i`` are ``a_i lam_g0_i`` (casadi copies
  ``lam_g0_i`` whatever ``a_i``);
* a row with ``a_i(p) = 0`` bounds nothing; if its constant value lies outside its
  bounds the solve is reported ``Infeasible_Problem_Detected`` (casadi returns without
  solving and without an error).

Arrays are float64, one row per instance (B instances at once; one solve is B = 1).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import final

import numpy as np

import casadi as ca

from caspar_backend.solver.status import STATUSES

#: the status of a solve whose simple row with ``a = 0`` is violated, and why
INFEASIBLE = "Infeasible_Problem_Detected"
_WHY = ("(a constraint detected as a simple bound does not depend on x at these "
        "parameters -- its coefficient is 0 -- and its value lies outside its bounds)")


@final
@dataclass(frozen=True)
class Merged:
    """One call's inputs as the solver gets them (final): ``lbx``, ``ubx`` (B, n) the
    merged bounds, ``lbg``, ``ubg``, ``lam_g0`` (B, m_kept) the other rows', ``lam_x0``
    (B, n); ``a`` (B, nb) the coefficients; ``lower``/``upper`` (B, n) the source of
    each side of x (-1: x's own, k >= 0: simple row k); ``infeasible`` (B,) whether a
    row with ``a = 0`` is violated."""

    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    lam_x0: np.ndarray
    lam_g0: np.ndarray
    a: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    infeasible: np.ndarray


@final
class SimpleBounds:
    """The simple rows of one nlp and the maps between the user's problem and the
    solver's (final).  :meth:`detect` builds it; ``rows`` are the simple rows,
    ``kept`` the others, ``target`` the variable of each simple row."""

    def __init__(self, rows: np.ndarray, kept: np.ndarray, target: np.ndarray,
                 parts: ca.Function, n: int, m: int):
        self.rows, self.kept, self.target = rows, kept, target
        self.n, self.m = n, m
        # (x, p) -> (a, g_simple): the coefficients and the rows' values at x
        self._parts = parts

    @staticmethod
    def detect(nlp: dict) -> "SimpleBounds | None":
        """casadi's detection on the nlp dict (``x``, ``p``, ``f``, ``g``); None when no
        row is simple (the problem then reaches the solver unchanged, as in casadi)."""
        x = nlp["x"]
        sym = type(x)
        g = nlp.get("g")
        if not isinstance(g, (ca.SX, ca.MX)) or g.nnz() == 0:
            return None                 # no constraints (a numeric g has no simple row)
        xv, gv = ca.vec(x), _nonzeros(g)
        p = nlp.get("p")
        pv = ca.vec(p) if p is not None else sym(0, 1)
        # rows of J^T's columns: the variables each constraint depends on
        sp = ca.jacobian_sparsity(gv, xv).T
        colind, row = sp.colind(), sp.row()
        nonlin = ca.which_depends(gv, xv, 2, True)
        m = int(gv.numel())
        simple = [colind[i + 1] - colind[i] == 1 and not nonlin[i] for i in range(m)]
        rows = np.flatnonzero(simple)
        if rows.size == 0:
            return None
        target = np.array([row[colind[i]] for i in rows], dtype=np.int64)
        gb = gv[rows.tolist()]
        parts = ca.Function("detect_simple_bounds_parts", [xv, pv],
                            [ca.jtimes(gb, xv, sym.ones(xv.numel(), 1)), gb])
        if sym is ca.MX:
            try:
                parts = parts.expand()
            except RuntimeError:
                pass                    # not expandable: casadi's MX virtual machine
        kept = np.flatnonzero(~np.asarray(simple, dtype=bool))
        return SimpleBounds(rows, kept, target, parts, int(xv.numel()), m)

    def reduced(self, nlp: dict) -> dict:
        """The nlp the solver sees: ``g`` without the simple rows (a column)."""
        gv = _nonzeros(nlp["g"])
        out = dict(nlp)
        out["g"] = gv[self.kept.tolist()] if self.kept.size else type(nlp["x"])(0, 1)
        return out

    def parts(self, X, P) -> tuple[np.ndarray, np.ndarray]:
        """``(a, g_simple)`` at B points: (B, nb) each."""
        X, P = np.asarray(X, float), np.asarray(P, float)
        B, nb = X.shape[0], self.rows.size
        # B columns: casadi evaluates the Function once per column
        a, gs = self._parts(ca.DM(X.T), ca.DM(P.T) if P.shape[1] else ca.DM(0, 1))
        return (np.array(a, dtype=float).reshape(nb, B).T,
                np.array(gs, dtype=float).reshape(nb, B).T)

    # ------------------------------------------------------------------ before
    def merge(self, X0, P, LBX, UBX, LBG, UBG, LX0, LG0) -> Merged:
        """The solver's inputs from the user's (module doc)."""
        A, Bv = self.parts(X0, P)
        lbg, ubg = LBG[:, self.rows], UBG[:, self.rows]
        x0 = X0[:, self.target]
        zero = A == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            lo = (lbg - Bv) / A
            hi = (ubg - Bv) / A
        lo, hi = np.where(A < 0, hi, lo) + x0, np.where(A < 0, lo, hi) + x0
        lo[zero], hi[zero] = -np.inf, np.inf
        lbx, ubx = LBX.copy(), UBX.copy()
        # the tightest side per variable (np.maximum.at: targets repeat)
        np.maximum.at(lbx.T, self.target, lo.T)
        np.minimum.at(ubx.T, self.target, hi.T)
        lower = self._source(lo, lbx, LBX, np.greater)
        upper = self._source(hi, ubx, UBX, np.less)
        # warm start: a side's multiplier is where it came from (chain rule for rows)
        lx0 = np.minimum(LX0, 0.0) * (lower < 0) + np.maximum(LX0, 0.0) * (upper < 0)
        scaled = A * LG0[:, self.rows]
        for src, part in ((lower, np.minimum), (upper, np.maximum)):
            b, j = np.nonzero(src >= 0)
            lx0[b, j] += part(scaled[b, src[b, j]], 0.0)
        infeasible = (zero & ((lbg > Bv) | (ubg < Bv))).any(axis=1)
        return Merged(lbx=lbx, ubx=ubx, lbg=LBG[:, self.kept], ubg=UBG[:, self.kept],
                      lam_x0=lx0, lam_g0=LG0[:, self.kept], a=A, lower=lower, upper=upper,
                      infeasible=infeasible)

    def _source(self, side, merged, own, beats) -> np.ndarray:
        """(B, n): -1 where the merged side is x's own, else the first simple row
        whose side equals it and beats x's own (casadi's ties keep the first)."""
        B, nb = side.shape
        hit = (side == merged[:, self.target]) & beats(side, own[:, self.target])
        first = np.full((self.n, B), nb, dtype=np.int64)
        np.minimum.at(first, self.target, np.where(hit, np.arange(nb), nb).T)
        first = first.T
        return np.where(first < nb, first, -1)

    # ------------------------------------------------------------------ after
    def split(self, merged: Merged, X, P, G, LX, LG) -> tuple:
        """``(g, lam_x, lam_g)`` of the user's problem from the solver's ``x``, ``g``,
        ``lam_x``, ``lam_g`` (module doc)."""
        B = X.shape[0]
        g = np.empty((B, self.m))
        g[:, self.kept] = G
        g[:, self.rows] = self.parts(X, P)[1]
        neg, pos = np.minimum(LX, 0.0), np.maximum(LX, 0.0)
        lam_x = neg * (merged.lower < 0) + pos * (merged.upper < 0)
        lam_s = np.zeros((B, self.rows.size))
        for src, part in ((merged.lower, neg), (merged.upper, pos)):
            b, j = np.nonzero(src >= 0)
            np.add.at(lam_s, (b, src[b, j]), part[b, j])
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_s = np.where(merged.a != 0, lam_s / merged.a, 0.0)
        lam_g = np.zeros((B, self.m))
        lam_g[:, self.kept] = LG
        lam_g[:, self.rows] = lam_s
        return g, lam_x, lam_g


def mark_infeasible(res, infeasible):
    """``res`` (a solve's :class:`~caspar_backend.solver.result.SolveResult`, or a
    :class:`~caspar_backend.batch.result.BatchResult`) with the instances flagged in
    ``infeasible`` (B,) reported :data:`INFEASIBLE`: the solver solved the other rows,
    but no x satisfies a violated constant row."""
    message = f"{STATUSES[INFEASIBLE].exit_message} {_WHY}"
    if isinstance(res.status, str):
        return replace(res, status=INFEASIBLE, message=message) if infeasible[0] else res
    return replace(res, status=[INFEASIBLE if bad else st for st, bad in
                                zip(res.status, infeasible)],
                   message=[message if bad else msg for msg, bad in
                            zip(res.message, infeasible)])


def _nonzeros(g):
    """The nonzeros of ``g`` as a column (the constraints, in casadi's order)."""
    return ca.vec(g) if g.nnz() == g.numel() else g.nz[:]
