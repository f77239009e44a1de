"""QDLDL's LDL^T factorization and solve, QDLDL's own loops on QDLDL's permuted matrix
(qdldl-python's AMD order and symperm entry order), with inertia counts.

The symbolic work QDLDL repeats at every factorization (the elimination tree's walk per
row, L's row indices) depends on the pattern only: :func:`elimination_tree` and
:func:`ldl_schedule` do it once per layout (compiled.workspace_layout), and
:func:`ldl_factor` runs QDLDL's numeric steps from their result.
"""
import math

from ._jit import U, _f, _fv, _i, kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)


@kernel
def ldl_factor(Fb, FO, Ib, IO, K):
    """QDLDL_factor on C = P K P^T (values scattered through cmap); returns
    (n_pos, n_neg, n_zero) as caspar's single path counts them.

    QDLDL's numeric steps in QDLDL's order, its symbolic ones read from the schedule of
    :func:`ldl_schedule` (slots I_LDL_ROW_PTR/COL/POS, I_L_INDICES): row k of L is
    computed by the updates q = Rp[k] .. Rp[k+1]-1, update q eliminating column Rc[q]
    into L's entry Rt[q].  The pattern of L is the same at every factorization, so QDLDL's
    walk of the elimination tree per row and its row indices are computed once per
    layout; the floating-point operations and their order are QDLDL's, so the factors
    are QDLDL's bit for bit."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    cmap = _i(Ib, IO, I_C_MAP)
    Cx = _f(Fb, FO, F_C_VALUES)
    D = _fv(Fb, FO, Ib, IO, F_LDL_D)
    yVals = _fv(Fb, FO, Ib, IO, F_LDL_YVALS)
    load_values(cmap, K, Cx, yVals, D, 0, cmap.shape[0], 0, n)
    if not ldl_eliminate(Fb, FO, Ib, IO):
        return 0, 0, n
    npos, nneg = inertia_counts(D, 0, n)
    return npos, nneg, n - npos - nneg


@kernel
def load_values(cmap, K, Cx, yVals, D, p0, p1, s0, s1):
    """``C[cmap[p]] = K[p]`` for p in ``p0 .. p1 - 1`` and the elimination's scratch
    ``yVals``, ``D`` zeroed on ``s0 .. s1 - 1``: QDLDL's load (one lane: all of both
    ranges; a team lane: its shares, :func:`.ldl_parts.ldl_load_part`)."""
    for p in range(U(p0), U(p1)):
        Cx[U(cmap[p])] = K[p]
    for i in range(U(s0), U(s1)):
        yVals[i] = 0.0
        D[i] = 0.0


@kernel
def permute(perm, b, t, s0, s1):
    """``t[i] = b[perm[i]]`` for i in ``s0 .. s1 - 1`` (the solve's permutation)."""
    for i in range(U(s0), U(s1)):
        t[i] = b[U(perm[i])]


@kernel
def scale(t, Dinv, s0, s1):
    """``t[i] *= Dinv[i]`` for i in ``s0 .. s1 - 1``."""
    for i in range(U(s0), U(s1)):
        t[i] *= Dinv[i]


@kernel
def unpermute(perm, t, x, s0, s1):
    """``x[perm[i]] = t[i]`` for i in ``s0 .. s1 - 1`` (the inverse permutation)."""
    for i in range(U(s0), U(s1)):
        x[U(perm[i])] = t[i]


@kernel
def inertia_counts(D, s0, s1):
    """(positive, negative) among the finite ``D[s0:s1]``."""
    npos = 0
    nneg = 0
    for i in range(U(s0), U(s1)):
        d = D[i]
        if math.isfinite(d):
            if d > 0.0:
                npos += 1
            elif d < 0.0:
                nneg += 1
    return npos, nneg


@kernel
def ldl_eliminate(Fb, FO, Ib, IO):
    """QDLDL's numeric elimination on the scattered values C (slot F_C_VALUES), with
    F_LDL_YVALS and F_LDL_D zero on entry: L's values, D and 1/D; False at an exact zero
    pivot, where QDLDL stops (:func:`ldl_factor`'s steps between the scatter and the
    inertia count)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    Cp = _i(Ib, IO, I_C_INDPTR)
    Ci = _i(Ib, IO, I_C_INDICES)
    Lp = _i(Ib, IO, I_L_INDPTR)
    Li = _i(Ib, IO, I_L_INDICES)
    Rp = _i(Ib, IO, I_LDL_ROW_PTR)
    Rc = _i(Ib, IO, I_LDL_ROW_COL)
    Rt = _i(Ib, IO, I_LDL_ROW_POS)
    Cx = _f(Fb, FO, F_C_VALUES)
    Lx = _f(Fb, FO, F_L_VALUES)
    D = _fv(Fb, FO, Ib, IO, F_LDL_D)
    Dinv = _fv(Fb, FO, Ib, IO, F_LDL_DINV)
    yVals = _fv(Fb, FO, Ib, IO, F_LDL_YVALS)
    D[0] = Cx[0]
    if D[0] == 0.0:
        return False
    Dinv[0] = 1.0 / D[0]
    for k in range(1, n):
        for i in range(U(Cp[k]), U(Cp[k + 1])):
            bidx = U(Ci[i])
            if bidx == U(k):
                D[k] = Cx[i]
            else:
                yVals[bidx] = Cx[i]
        for q in range(U(Rp[k]), U(Rp[k + 1])):
            cidx = U(Rc[q])
            tmp = U(Rt[q])
            yv = yVals[cidx]
            for j in range(U(Lp[cidx]), U(tmp)):
                yVals[U(Li[j])] -= Lx[j] * yv
            Lx[tmp] = yv * Dinv[cidx]
            D[k] -= yv * Lx[tmp]
            yVals[cidx] = 0.0
        if D[k] == 0.0:
            return False
        Dinv[k] = 1.0 / D[k]
    return True


@kernel
def ldl_solve(Fb, FO, Ib, IO, b, x):
    """x = K^{-1} b through the factors (qdldl-python: permute, QDLDL_solve, back).

    QDLDL's forward solve subtracts column j's multiples from the rows below it, j in
    increasing order, so row r's value is ``t_r - L_rj1 t_j1 - L_rj2 t_j2 - ...`` with
    j1 < j2 < ... : here each row gathers those terms in that order from L's row form
    (slots I_L_ROW_PTR/COL/POS), the same operations in the same order, with no store
    a later load has to wait for."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    perm = _i(Ib, IO, I_PERM)
    Dinv = _fv(Fb, FO, Ib, IO, F_LDL_DINV)
    t = _fv(Fb, FO, Ib, IO, F_LDL_T)
    permute(perm, b, t, 0, n)
    ldl_forward(Fb, FO, Ib, IO)
    scale(t, Dinv, 0, n)
    ldl_backward(Fb, FO, Ib, IO)
    unpermute(perm, t, x, 0, n)


@kernel
def ldl_forward(Fb, FO, Ib, IO):
    """L t = t in place (slot F_LDL_T, the permuted right-hand side on entry): row i
    gathers its terms in increasing column, QDLDL's order (:func:`ldl_solve`)."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    Lx = _f(Fb, FO, F_L_VALUES)
    Rp, Rc, Rq = _i(Ib, IO, I_L_ROW_PTR), _i(Ib, IO, I_L_ROW_COL), _i(Ib, IO, I_L_ROW_POS)
    t = _fv(Fb, FO, Ib, IO, F_LDL_T)
    for i in range(n):
        v = t[i]
        for k in range(U(Rp[i]), U(Rp[i + 1])):
            v -= Lx[U(Rq[k])] * t[U(Rc[k])]
        t[i] = v


@kernel
def ldl_backward(Fb, FO, Ib, IO):
    """L^T t = t in place (slot F_LDL_T), QDLDL's column order."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    Lp, Li = _i(Ib, IO, I_L_INDPTR), _i(Ib, IO, I_L_INDICES)
    Lx = _f(Fb, FO, F_L_VALUES)
    t = _fv(Fb, FO, Ib, IO, F_LDL_T)
    for i in range(n - 1, -1, -1):
        v = t[i]
        for j in range(U(Lp[i]), U(Lp[i + 1])):
            v -= Lx[j] * t[U(Li[j])]
        t[i] = v


@kernel
def elimination_tree(n, Cp, Ci, work, Lnz, etree):
    """QDLDL_etree on the permuted upper CSC pattern (Cp, Ci) of size n: ``etree[j]`` the
    parent of column j (-1 for a root), ``Lnz[j]`` the number of entries of L's column j.
    ``work`` (n,) int64 scratch.  Returns nnz(L), or -1 if an entry lies below the
    diagonal."""
    for j in range(n):
        work[j] = 0
        Lnz[j] = 0
        etree[j] = -1
    for j in range(n):
        work[j] = j
        for p in range(Cp[j], Cp[j + 1]):
            i = Ci[p]
            if i > j:
                return -1
            while work[i] != j:
                if etree[i] == -1:
                    etree[i] = j
                Lnz[i] += 1
                work[i] = j
                i = etree[i]
    total = 0
    for j in range(n):
        total += Lnz[j]
    return total


@kernel
def ldl_schedule(n, Cp, Ci, etree, Lp, Li, Rp, Rc, Rt, mark, elim, nxt, yIdx):
    """QDLDL_factor's symbolic steps for the permuted upper CSC pattern (Cp, Ci) of size
    n >= 1 with elimination tree ``etree`` and column pointers ``Lp`` of L
    (:func:`elimination_tree`): for each row k, the columns QDLDL eliminates into it, in
    QDLDL's order (its etree walk from each entry of C's column k, each path reversed,
    the whole list taken from its end), and the entry of L each one fills.  Writes
    ``Rp`` (n + 1,): row k's updates are q = Rp[k] .. Rp[k+1]-1; ``Rc`` (nnz(L),): the
    column eliminated by update q; ``Rt`` (nnz(L),): the index into L's values it
    writes; ``Li`` (nnz(L),): L's row indices (QDLDL's ``Li``).  ``mark``, ``elim``,
    ``nxt``, ``yIdx`` (n,) int64 scratch.  Returns the number of updates, nnz(L)."""
    for i in range(n):
        mark[i] = 0
        nxt[i] = Lp[i]
    Rp[0] = 0
    if n > 0:
        Rp[1] = 0
    q = 0
    for k in range(1, n):
        nnzY = 0
        for i in range(Cp[k], Cp[k + 1]):
            bidx = Ci[i]
            if bidx == k:
                continue
            nidx = bidx
            if mark[nidx] == 0:
                mark[nidx] = 1
                elim[0] = nidx
                nnzE = 1
                nidx = etree[bidx]
                while nidx != -1 and nidx < k:
                    if mark[nidx] == 1:
                        break
                    mark[nidx] = 1
                    elim[nnzE] = nidx
                    nnzE += 1
                    nidx = etree[nidx]
                while nnzE > 0:
                    nnzE -= 1
                    yIdx[nnzY] = elim[nnzE]
                    nnzY += 1
        for i in range(nnzY - 1, -1, -1):
            cidx = yIdx[i]
            tmp = nxt[cidx]
            Rc[q] = cidx
            Rt[q] = tmp
            Li[tmp] = k
            q += 1
            nxt[cidx] += 1
            mark[cidx] = 0
        Rp[k + 1] = q
    return q
