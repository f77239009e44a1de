"""DENSE_SCHUR's elimination as compiled loops: the reduced matrix built point by point.

With the split of :mod:`caspar_backend.lsq.schur` (rows of J touching at most one
e-block; E's block of row ``i`` a (1 x s_e) row, F's blocks (1 x s_f) rows, one per
(row, f-block) incidence), :func:`eliminate` computes in one pass over the e-blocks

    V_b   = sum_{i in rows(b)} E_i^T E_i + diag(dd_e[b])          (s_e x s_e)
    g_b   = sum_{i in rows(b)} E_i^T r_i                           (s_e,)
    W_bc  = sum_{i in rows(b), k in inc(i), fblock(k) = c} F_k^T E_i   (s_f x s_e)
    S    += - W_bc V_b^{-1} W_bc'^T          for the f-blocks c <= c' rows(b) touch
    rhs  +=   W_bc V_b^{-1} g_b

after ``S = F^T F`` (every row: ``F_k^T F_l`` for its incidences k, l) and
``rhs = -F^T r``: the dense reduced system of the step.  Only the blocks on and above
the diagonal of S are written (LAPACK's Cholesky reads the upper triangle).  ``V_b``
is factorized by Cholesky (s_e <= 9); a block that is not positive definite stops the
pass with status 1.  :func:`back_substitute` gives ``dx_e = -V_b^{-1} (g_b + sum_i E_i^T
(F_i dx_f))``.

One thread of work per e-block and the (f-block, f-block) pairs it touches: O(sum_b
t_b^2 s_f^2 s_e) for t_b f-blocks per e-block -- the flops of the block-sparse products
of :class:`~caspar_backend.lsq.schur.SchurComplementSolver`'s BSR path without their
intermediate matrices (measured on the 36,000-observation bundle adjustment of
``benchmarks/bench_bundle_ceres.py``: a step in 40-60 ms against 100-140 ms).

Arrays (int64 indices, float64 values), J's rows renumbered e-block by e-block (the
rows of e-block b are ``et_indptr[b]:et_indptr[b + 1]``, rows touching no e-block
after them): ``Ed`` (n_erows, s_e) E's rows; ``f_indptr`` (m + 1,) and ``f_block``
(n_inc,): each row's incidences and their f-blocks; ``Fd`` (n_inc, s_f); ``r`` (m,).
Compiled by Numba once per machine (``cache=True``); importing this module compiles
nothing.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def eliminate(Ed, et_indptr, b0, b1, Fd, f_indptr, f_block, r, i0, i1, dd_e, S, rhs, Vinv,
              g_e, slot, touched, Wloc, Tloc, L):
    """Fill ``S`` (N, N; upper blocks), ``rhs`` (N,) with the terms of rows ``i0:i1``
    (F^T F, -F^T r) and of e-blocks ``b0:b1``, and those blocks' ``Vinv`` (n_eb, s_e,
    s_e) and ``g_e`` (n_eb, s_e), as the module docstring says (a thread's share: the
    shares' S and rhs add up); ``dd_e`` (n_eb, s_e) the e-side damping (1 on pads).  Scratch: ``slot`` (n_fb,) all -1 (restored), ``touched``
    (T,), ``Wloc``/``Tloc`` (T, s_f, s_e), ``L`` (s_e, s_e) with T the most f-block
    incidences of one e-block.  Returns 0, or 1 when some V_b is not positive
    definite."""
    s_e = Ed.shape[1]
    s_f = Fd.shape[1]
    S[:, :] = 0.0
    rhs[:] = 0.0
    # ---- F^T F and -F^T r, row by row
    for i in range(i0, i1):
        ri = r[i]
        for k in range(f_indptr[i], f_indptr[i + 1]):
            ck = f_block[k] * s_f
            for a in range(s_f):
                rhs[ck + a] -= Fd[k, a] * ri
            for l in range(f_indptr[i], f_indptr[i + 1]):
                cl = f_block[l] * s_f
                if cl < ck:
                    continue
                for a in range(s_f):
                    fa = Fd[k, a]
                    for c in range(s_f):
                        S[ck + a, cl + c] += fa * Fd[l, c]
    # ---- each e-block: V_b, its inverse, W_b, the update of S and rhs
    for b in range(b0, b1):
        V = Vinv[b]
        g = g_e[b]
        V[:, :] = 0.0
        g[:] = 0.0
        for a in range(s_e):
            V[a, a] = dd_e[b, a]
        nt = 0
        for i in range(et_indptr[b], et_indptr[b + 1]):
            ri = r[i]
            for a in range(s_e):
                ea = Ed[i, a]
                g[a] += ea * ri
                for c in range(s_e):
                    V[a, c] += ea * Ed[i, c]
            for k in range(f_indptr[i], f_indptr[i + 1]):
                blk = f_block[k]
                j = slot[blk]
                if j < 0:
                    j = nt
                    slot[blk] = j
                    touched[j] = blk
                    Wloc[j, :, :] = 0.0
                    nt += 1
                for c in range(s_e):
                    ec = Ed[i, c]
                    for a in range(s_f):
                        Wloc[j, c, a] += Fd[k, a] * ec
        # Cholesky V = L L^T, then V^{-1} = L^{-T} L^{-1} written over V
        for c in range(s_e):
            acc = V[c, c]
            for k in range(c):
                acc -= L[c, k] * L[c, k]
            if not acc > 0.0:
                for j in range(nt):
                    slot[touched[j]] = -1
                return 1
            L[c, c] = np.sqrt(acc)
            for a in range(c + 1, s_e):
                acc = V[a, c]
                for k in range(c):
                    acc -= L[a, k] * L[c, k]
                L[a, c] = acc / L[c, c]
        # L^{-1} in the lower triangle of L (in place, column by column)
        for c in range(s_e):
            L[c, c] = 1.0 / L[c, c]
            for a in range(c + 1, s_e):
                acc = 0.0
                for k in range(c, a):
                    acc -= L[a, k] * L[k, c]
                L[a, c] = acc / L[a, a]
        for a in range(s_e):
            for c in range(a, s_e):
                acc = 0.0
                for k in range(c, s_e):
                    acc += L[k, a] * L[k, c]
                V[a, c] = acc
                V[c, a] = acc
        # T_j = W_j V^{-1}; rhs += T_j g; S[c_j, c_j'] -= T_j W_j'^T (c_j <= c_j')
        for j in range(nt):
            Tloc[j, :, :] = 0.0
            for c in range(s_e):
                for k in range(s_e):
                    vck = V[c, k]
                    for a in range(s_f):
                        Tloc[j, c, a] += vck * Wloc[j, k, a]
            cj = touched[j] * s_f
            for c in range(s_e):
                gc = g[c]
                for a in range(s_f):
                    rhs[cj + a] += Tloc[j, c, a] * gc
        for j in range(nt):
            cj = touched[j] * s_f
            for j2 in range(nt):
                cj2 = touched[j2] * s_f
                if cj2 < cj:
                    continue
                for a in range(s_f):
                    row = S[cj + a, cj2:cj2 + s_f]
                    for k in range(s_e):
                        t = Tloc[j, k, a]
                        for c in range(s_f):
                            row[c] -= t * Wloc[j2, k, c]
        for j in range(nt):
            slot[touched[j]] = -1
    return 0


@njit(cache=True, nogil=True)
def back_substitute(Ed, et_indptr, b0, b1, Fd, f_indptr, f_block, Vinv, g_e, dxf, dxe, y):
    """``dxe[b]`` = ``-V_b^{-1} (g_b + sum_i E_i^T (F_i dx_f))`` for e-blocks ``b0:b1``;
    ``y`` (s_e,) scratch."""
    s_e = Ed.shape[1]
    s_f = Fd.shape[1]
    for b in range(b0, b1):
        for a in range(s_e):
            y[a] = g_e[b, a]
        for i in range(et_indptr[b], et_indptr[b + 1]):
            fi = 0.0
            for k in range(f_indptr[i], f_indptr[i + 1]):
                ck = f_block[k] * s_f
                for a in range(s_f):
                    fi += Fd[k, a] * dxf[ck + a]
            for a in range(s_e):
                y[a] += Ed[i, a] * fi
        for a in range(s_e):
            acc = 0.0
            for c in range(s_e):
                acc += Vinv[b, a, c] * y[c]
            dxe[b, a] = -acc
