"""The structural parts of the slack problem and of its barrier quantities.

:class:`SlackStructure` is everything :class:`~.nlp.SlackNLP` derives from the
evaluator's sparsity and three discrete facts of a solve -- the fixed variables
(``lbx == ubx``), the equality rows (``lbg == ubg``) and whether equalities are relaxed
(``kkt_system = 'condensed'``) -- and :class:`BoundStructure` what
:class:`~.quantities.BarrierQuantities` derives from which of the bounds ``wL``, ``wU``
are finite.  Neither depends on a value of ``p``, ``x0`` or the bounds, so the solves of
one compiled problem share them through its
:class:`~caspar_backend.structure_cache.StructureCache` (keys: :func:`slack_key`, and
:meth:`BoundStructure.key` below a problem's key).  Both are built once and never
written (:mod:`caspar_backend.structure_cache`); device arrays are copies made once.

Notation (:mod:`.nlp`): ``n``, ``m`` the user's sizes, ``nx`` free variables, ``ns``
slacks, ``nw = nx + ns``; 0-based int64 index arrays.
"""

from __future__ import annotations

import numpy as np

from ..arrays import host, segment_sum
from ..structure_cache import mask_key


def is_square(n_free: int, n_eq: int) -> bool:
    """IPOPT's IsSquareProblem: as many free variables as equality rows, at least one.
    IPOPT starts a square problem's multipliers at zero and recomputes them after every
    step (:meth:`~.ipm.InteriorPoint._feasibility_multipliers`)."""
    return n_eq > 0 and n_free == n_eq


def free_entries(free, n, jr, jc, hr, hc) -> tuple:
    """IPOPT's make_parameter on the evaluator's sparsity: with ``free`` (int64, the
    indices of the nx free variables among n), the Jacobian entries in free columns and
    the Hessian entries with both indices free, in the evaluator's order and renumbered
    into w's columns: ``(jkeep, rows, cols, hkeep, hess_rows, hess_cols)`` (``jkeep``,
    ``hkeep``: positions in the evaluator's COO).  With every variable free, the
    evaluator's own arrays (no gathers: seconds of host work at 10^6 rows)."""
    nx = len(free)
    if nx == n:
        return np.arange(len(jc)), jr, jc, np.arange(len(hr)), hr, hc
    colmap = -np.ones(n, np.int64)
    colmap[free] = np.arange(nx)
    jkeep = np.flatnonzero(colmap[jc] >= 0)
    hkeep = np.flatnonzero((colmap[hr] >= 0) & (colmap[hc] >= 0))
    return (jkeep, jr[jkeep], colmap[jc[jkeep]], hkeep, colmap[hr[hkeep]],
            colmap[hc[hkeep]])


def slack_key(device, fixed, eq, relax_equalities) -> tuple:
    """The cache key of a :class:`SlackStructure`: the device, the fixed set, the
    equality rows and the relaxation (the evaluator, whose sparsity completes the
    structure, owns the cache)."""
    return ("slack", device, mask_key(fixed), mask_key(eq), bool(relax_equalities))


def inverse_map(idx, n: int) -> np.ndarray:
    """int64 (n,): k at ``idx[k]`` (``idx`` without duplicates), -1 elsewhere."""
    pos = np.full(n, -1, np.int64)
    pos[np.asarray(idx, np.int64)] = np.arange(len(idx), dtype=np.int64)
    return pos


class SlackStructure:
    """Final.  The w-space structure of the slack problem (see :mod:`.nlp`):

    * ``fixed`` (bool, n), ``free`` (its complement's indices), ``nx``, ``all_free``;
    * ``eq`` (bool, m), ``relax_equalities``, ``slack_rows`` (the rows with a slack, in
      order: the inequalities, or every row when relaxed), ``ns``, ``nw``,
      ``relaxed_equality_slacks`` (w-indices), ``enforced`` (bool, m: equalities kept as
      equalities);
    * the evaluator's Jacobian COO ``ev_jac_rows``, ``ev_jac_cols``; the kept entries
      ``jkeep`` (those in free columns) and ``hkeep`` (both indices free), ``nj_user``
      kept Jacobian entries, ``hkeep_all``; the w-space Jacobian COO ``jac_rows``,
      ``jac_cols`` (kept entries renumbered, then one ``-1`` per slack) and Hessian
      lower COO ``hess_rows``, ``hess_cols``;
    * device copies of the gathers of every evaluation: ``free_d``, ``slack_d``,
      ``jkeep_d``, ``hkeep_d`` (None where every entry is kept: the evaluations then
      skip the gather), ``eq_d``, ``enforced_d`` (indices)."""

    def __init__(self, ev, fixed, eq, relax_equalities, xp):
        n, m = ev.n, ev.m
        fixed, eq = np.array(fixed, bool), np.array(eq, bool)
        self.n, self.m = n, m
        self.fixed = fixed
        free = np.flatnonzero(~fixed)
        self.free = free
        self.nx = nx = len(free)
        self.all_free = nx == n
        self.eq = eq
        self.relax_equalities = bool(relax_equalities)
        slack_rows = np.arange(m) if relax_equalities else np.flatnonzero(~eq)
        self.slack_rows = slack_rows
        # slack i is column nx + i when every row has one
        self.relaxed_equality_slacks = (nx + np.flatnonzero(eq) if relax_equalities
                                        else np.zeros(0, np.int64))
        self.ns = ns = len(slack_rows)
        self.nw = nx + ns
        # int64 views where the evaluator's are int64 already (copies of 10^6-10^7
        # entries otherwise; nothing below writes to them)
        jr, jc = (np.asarray(host(a), np.int64) for a in (ev.jac_rows, ev.jac_cols))
        hr, hc = (np.asarray(host(a), np.int64) for a in (ev.hess_rows, ev.hess_cols))
        self.ev_jac_rows, self.ev_jac_cols = jr, jc
        self.nj_ev, self.nh_ev = len(jr), len(hr)
        jkeep, jr_kept, jc_kept, hkeep, hess_rows, hess_cols = free_entries(
            free, n, jr, jc, hr, hc)
        self.jkeep, self.hkeep = jkeep, hkeep
        self.hess_rows, self.hess_cols = hess_rows, hess_cols
        self.jac_rows = np.concatenate([jr_kept, slack_rows])
        self.jac_cols = np.concatenate([jc_kept, nx + np.arange(ns)])
        self.nj_user = len(jkeep)
        self.hkeep_all = len(hkeep) == len(hr)
        self.jall = self.nj_user == len(jr)
        enforced = eq & (not relax_equalities)
        self.enforced = enforced
        # device copies of the gathers used in every evaluation
        self.free_d = xp.asarray(free)
        self.slack_d = xp.asarray(slack_rows)
        self.jkeep_d = None if self.jall else xp.asarray(jkeep)
        self.hkeep_d = None if self.hkeep_all else xp.asarray(hkeep)
        self.eq_d = xp.asarray(eq)
        self.enforced_d = xp.asarray(np.flatnonzero(enforced))
        # row r's slack position (or -1): the constraint residual's fused kernel
        self.slack_pos_d = xp.asarray(inverse_map(slack_rows, m))


class BoundStructure:
    """Final.  The finite-bound index sets of a barrier problem ``min f(w) s.t. h(w) = 0,
    wL <= w <= wU`` with Jacobian COO ``(jac_rows, jac_cols)`` (see
    :mod:`.quantities`): ``iL``, ``iU`` (the finite bounds, ``nL``, ``nU`` of them),
    ``dampL`` = 1.0 where the entry of iL has no finite upper bound (``dampU``
    likewise; 0/1 floats, and their indices ``idampL``, ``idampU``), ``jr`` the
    Jacobian rows and ``aty_sum`` the segment sum over its columns (``A^T y``); arrays
    in ``xp``."""

    def __init__(self, finite_L, finite_U, jac_rows, jac_cols, nw, xp):
        iL, iU = np.flatnonzero(finite_L), np.flatnonzero(finite_U)
        self.iL, self.iU = xp.asarray(iL), xp.asarray(iU)
        self.nL, self.nU = len(iL), len(iU)
        # the inverse maps (posL[j] = k where iL[k] = j, else -1): a fused kernel over w
        # finds each entry's bound terms through them instead of scattering
        self.posL, self.posU = (xp.asarray(inverse_map(i, len(finite_L))) for i in (iL, iU))
        dampL, dampU = ~finite_U[iL], ~finite_L[iU]
        # 0/1 floats (kd * damp as with the booleans) and the index sets (gathers, not
        # boolean masks: a mask's size is data-dependent, which costs a device sync)
        self.dampL = xp.asarray(dampL.astype(float))
        self.dampU = xp.asarray(dampU.astype(float))
        self.idampL = xp.asarray(np.flatnonzero(dampL))
        self.idampU = xp.asarray(np.flatnonzero(dampU))
        jr, jc = np.asarray(jac_rows, np.int64), np.asarray(jac_cols, np.int64)
        self.jr, self.nnz_j = xp.asarray(jr), len(jr)
        # A^T y = segment sum over the Jacobian columns of jv * y[jr]
        self.aty_sum = segment_sum(xp, jc, nw)

    @staticmethod
    def key(finite_L, finite_U) -> tuple:
        """The cache key below the problem's: which bounds are finite."""
        return ("bounds", mask_key(finite_L), mask_key(finite_U))
