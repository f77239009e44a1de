"""The structure of one (problem, bound structure): the slack problem's index sets and the
augmented KKT pattern in QDLDL's elimination order -- everything the compiled interior
point reads but never writes.  NumPy only (no Numba): built once, shared by every solve
with the same bound structure.

Bound structure: which entries of lbx/ubx/lbg/ubg are finite, which rows are equalities
(lbg == ubg) and which variables are fixed (lbx == ubx).  The slack problem
(batch/nlp.py, solver/nlp.py) has w = (x[free], s), nx free variables and one slack per
inequality row (``slack_rows``); KKT dimension N = nw + m with nw = nx + ns.
"""
from __future__ import annotations

import numpy as np

from ..batch.kkt import qdldl_order
from ..kkt.pattern import AugmentedPattern
from ..solver.structure import free_entries


def _i64(a):
    return np.ascontiguousarray(a, np.int64)


def bound_signature(lbx, ubx, lbg, ubg) -> bytes:
    """A key of the bound structure: finite sides of x and g (lbx, ubx, lbg, ubg in that
    order, as bools), then the equality rows, then the fixed variables; the lengths are
    the problem's."""
    return np.isfinite(np.concatenate((lbx, ubx, lbg, ubg))).tobytes() + \
        (lbg == ubg).tobytes() + (lbx == ubx).tobytes()


def symperm_upper(Kp, Ki, perm):
    """qdldl-python's ``symperm`` of an upper-triangular CSC pattern (Kp, Ki) by ``perm``
    (C[i, j] = K[perm[i], perm[j]]), with its entry order: C's column c lists the entries
    of K, in K's CSC order, whose larger new index is c.  Returns (Cp, Ci, cmap) with
    ``cmap[p]`` the position in C of K's entry p."""
    n = len(Kp) - 1
    col = np.repeat(np.arange(n, dtype=np.int64), np.diff(Kp))
    if np.any(Ki > col):
        raise ValueError("symperm_upper: the KKT pattern is not upper triangular")
    pinv = np.empty(n, np.int64)
    pinv[perm] = np.arange(n)
    a, b = pinv[Ki], pinv[col]
    newcol, newrow = np.maximum(a, b), np.minimum(a, b)
    order = np.argsort(newcol, kind="stable")       # K's CSC order within each column
    Cp = np.zeros(n + 1, np.int64)
    Cp[1:] = np.cumsum(np.bincount(newcol, minlength=n))
    Ci = newrow[order]
    cmap = np.empty(len(Ki), np.int64)
    cmap[order] = np.arange(len(Ki))
    return Cp, Ci, cmap


def build_structure(model, n_params, lbx, ubx, lbg, ubg, filter_cap):
    """Int arrays (dict slot name -> array) and float constants of the structure; the
    sizes of every slot follow from them (:mod:`.workspace_layout`)."""
    n, m = model["n"], model["m"]
    eq = lbg == ubg
    slack_rows = np.flatnonzero(~eq)
    # fixed variables (IPOPT's make_parameter, as the general path's SlackStructure): w
    # holds the free ones; the Jacobian keeps its entries in free columns, the Hessian
    # those with both indices free (in the evaluator's order), renumbered
    fixed = lbx == ubx
    free, fixed_idx = np.flatnonzero(~fixed), np.flatnonzero(fixed)
    nx, ns = len(free), len(slack_rows)
    nw = nx + ns
    ejr, ejc = _i64(model["jac_rows"]), _i64(model["jac_cols"])
    ehr, ehc = _i64(model["hess_rows"]), _i64(model["hess_cols"])
    jkeep, ujr, ujc, hkeep, hr, hc = free_entries(free, n, ejr, ejc, ehr, ehc)
    jr = _i64(np.concatenate([ujr, slack_rows]))
    jc = _i64(np.concatenate([ujc, nx + np.arange(ns)]))
    wLf = np.concatenate([np.isfinite(lbx[free]), np.isfinite(lbg[slack_rows])])
    wUf = np.concatenate([np.isfinite(ubx[free]), np.isfinite(ubg[slack_rows])])
    iL, iU = np.flatnonzero(wLf), np.flatnonzero(wUf)
    # damping: a bound whose other side is infinite (kappa_d term of the barrier)
    dampL = (~wUf[iL]).astype(float)
    dampU = (~wLf[iU]).astype(float)
    pat = AugmentedPattern(nw, m, hr, hc, jr, jc)
    st = pat.structure
    N = pat.N
    Kp, Ki = _i64(st.indptr), _i64(st.indices)
    perm = qdldl_order(st, nw)
    if perm is None:
        raise ImportError("the compiled path needs qdldl's elimination order (pip install qdldl)")
    Cp, Ci, cmap = symperm_upper(Kp, Ki, perm)
    off = np.flatnonzero(hr != hc)
    # columns of the static-term norms: [hess, hess off-diagonal mirrored, jac, diagonal]
    colsq = _i64(np.concatenate([hr, hc[off], jc, np.arange(nw)]))
    count = np.bincount(jc, minlength=nw)
    in_hess = np.zeros(nw, bool)
    in_hess[hr], in_hess[hc] = True, True
    single_row = (np.bincount(jr, minlength=m) == 1)[jr]
    # private pivots (AugmentedKKT): a Jacobian entry alone in its column and not in the
    # Hessian, or alone in its row
    priv = np.flatnonzero(((count[jc] == 1) & ~in_hess[jc]) | single_row)
    priv_none = np.where(np.bincount(jr[priv], minlength=m) > 0, 0.0, np.inf)
    nsrc = int(pat.off[4])
    ints = dict(
        SLACK_ROWS=slack_rows, EQ_MASK=eq.astype(np.int64), LOWER_IDX=iL, UPPER_IDX=iU,
        DAMP_L_IDX=np.flatnonzero(dampL), DAMP_U_IDX=np.flatnonzero(dampU),
        JAC_ROWS=jr, JAC_COLS=jc, KKT_MAP=pat.map, HESS_OFFDIAG=off, COL_SQ_IDX=colsq,
        PRIV_ENTRY=priv, PRIV_COL=jc[priv], PRIV_ROW=jr[priv], K_INDPTR=Kp, K_INDICES=Ki,
        K_DIAG_POS=Kp[1:] - 1, C_INDPTR=Cp, C_INDICES=Ci, C_MAP=cmap, PERM=perm,
        EQ_ROWS=np.flatnonzero(eq), UJAC_ROWS=ujr, FREE_IDX=free, FIXED_IDX=fixed_idx)
    # the gathers and the evaluator's Jacobian COO (the fixed variables' multipliers) are
    # read only with a fixed variable: empty without one
    some = len(fixed_idx) > 0
    none = np.zeros(0, np.int64)
    ints.update(JAC_KEEP=jkeep if some else none, HESS_KEEP=hkeep if some else none,
                EV_JAC_ROWS=ejr if some else none, EV_JAC_COLS=ejc if some else none)
    ints = {k: _i64(v) for k, v in ints.items()}
    floats = dict(DAMP_L=dampL, DAMP_U=dampU, PRIV_NONE=priv_none)
    sizes = dict(n=n, m=m, nw=nw, nx=nx, ns=ns, nL=len(iL), nU=len(iU), nj=len(jr),
                 nju=len(ujr), nh=len(hr), nkkt=N, nnzK=pat.nnz, nnzL=-1,
                 neq=int(eq.sum()), npriv=len(priv), noff=len(off), nsrc=nsrc,
                 ncolsq=len(colsq), filter_cap=filter_cap, n_params=n_params,
                 nfix=len(fixed_idx), nje=len(ejr), nhe=len(ehr))
    return ints, floats, sizes
