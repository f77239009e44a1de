"""Dense Bunch-Kaufman LDL^T of a small KKT matrix, with its inertia and solve.

A K of at most :data:`caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N` rows is
factorized as IPOPT's MUMPS factorizes every K: with pivoting and without a static term.
``P K P^T = L D L^T`` with L unit lower triangular and D block diagonal (1x1 and 2x2
blocks), the pivots chosen by Bunch and Kaufman's partial pivoting (LAPACK's ``dsytf2``,
lower): with ``alpha = (1 + sqrt 17) / 8``, ``colmax`` the largest entry below the
diagonal of column k and ``rowmax`` the largest off-diagonal entry of row ``imax`` (where
``colmax`` lies) in the trailing matrix,

* ``|a_kk| >= alpha colmax``, or ``|a_kk| colmax >= alpha colmax^2 / rowmax``: a 1x1
  pivot a_kk;
* ``|a_imax,imax| >= alpha rowmax``: a 1x1 pivot, rows and columns k and imax swapped;
* else a 2x2 pivot on rows k and imax (imax swapped into k + 1).

Inertia (Sylvester): a 1x1 pivot counts by its sign; a 2x2 block ``[[a, b], [b, c]]`` with
``det = ac - b^2 < 0`` (always, in exact arithmetic, for Bunch-Kaufman's blocks) one of
each sign, ``det > 0`` two of a's sign.

**Zero pivots.**  A singular K (dependent constraint rows) leaves, after rounding, a
pivot of the size of the rounding errors of the updates that cancelled in it, not an
exact zero; solving with it returns multipliers of ~1e16.  So each diagonal entry
carries its elimination *mass*, ``|a_ii|`` plus the magnitudes of every update
subtracted from it, and a 1x1 pivot of at most ``PIVOT_CANCELLATION`` times its mass --
rounding residue -- counts as zero, as MUMPS reports such a K singular (hs061 at its
start: -2 + 2 leaves 2.2e-16 of mass 4).  Measured: such residues were 4e-18 .. 1.7e-16
of their mass in random singular KKT matrices (N <= 60); the smallest genuine pivots
8e-13 (the bank's infeasible disc), 3e-10 (Pyomo's parmest reactor_design, k3 ~ 1e-4
against concentrations ~5e3), 2e-4 in 200 random nonsingular ones.  A dependency whose
residue lands in an off-diagonal entry first is not seen (46 of 100 random singular
matrices showed no residue pivot; LAPACK's dsytrf tests its pivots for exact zeros only:
raw benchmarks/results/raw/cpu_2026-12-05_session45/ratio_*).  A 2x2 block
is never such a residue: the pivoting rule makes ``|a c| < alpha^2 b^2``, so
``det < -(1 - alpha^2) b^2``.

Storage (float slots, one solve's workspace): F_BK_A the N x N matrix column-major
(``A[i, j]`` at ``j N + i``; the lower triangle holds L below the diagonal and D's
blocks), F_BK_PIV the pivots as floats (``piv[k] = kp`` for a 1x1 pivot, ``-(kp + 1)`` in
both rows of a 2x2 one, kp the row swapped in), F_BK_MASS the diagonal's masses.  Int
slot I_BK_MAP: for stored entry p of K's upper triangle (row r <= column c), ``r N + c``
(its lower-triangle position).
"""
import math

from numba import prange

from ._jit import _f, _i, kernel, parallel_kernel
from .slots import *  # noqa: F401,F403 (slot numbers: compile-time constants)

#: Bunch and Kaufman's constant: the growth bound of their partial pivoting
BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
#: a 1x1 pivot at most this fraction of its elimination mass is zero (module doc:
#: rounding's residue of an eliminated dependent row)
PIVOT_CANCELLATION = 1e-14


@kernel
def _swap(A, n, k, kk, kp):
    """Interchange rows and columns kk < kp of the trailing lower triangle A[k:, k:]
    (LAPACK dsytf2's lower-triangle swap)."""
    for i in range(kp + 1, n):
        t = A[kk * n + i]
        A[kk * n + i] = A[kp * n + i]
        A[kp * n + i] = t
    for j in range(kk + 1, kp):
        t = A[kk * n + j]
        A[kk * n + j] = A[j * n + kp]
        A[j * n + kp] = t
    t = A[kk * n + kk]
    A[kk * n + kk] = A[kp * n + kp]
    A[kp * n + kp] = t
    if kk > k:          # the 2x2 block's first column
        t = A[k * n + kk]
        A[k * n + kk] = A[k * n + kp]
        A[k * n + kp] = t


@kernel
def bk_factor(Fb, FO, Ib, IO, K):
    """Factorize K (values in the stored upper-triangle order of the KKT pattern):
    returns ``(n_pos, n_neg, n_zero)``; n_zero > 0 (a zero pivot, module doc) means
    singular, and the factors must not be solved with."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    A = _f(Fb, FO, F_BK_A)
    amap = _i(Ib, IO, I_BK_MAP)
    for i in range(n * n):
        A[i] = 0.0
    for p in range(amap.shape[0]):
        A[amap[p]] = K[p]
    return bk_factor_dense(n, A, _f(Fb, FO, F_BK_PIV), _f(Fb, FO, F_BK_MASS))


@kernel
def bk_factor_dense(n, A, piv, mass):
    """The factorization of the n x n matrix whose lower triangle ``A`` holds
    (column-major, overwritten by the factors); ``piv`` (n,) and ``mass`` (n,) are
    written.  Returns ``(n_pos, n_neg, n_zero)``."""
    for i in range(n):
        mass[i] = abs(A[i * n + i])
    npos = 0
    nneg = 0
    nzero = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(A[k * n + k])
        imax = k
        colmax = 0.0
        for i in range(k + 1, n):
            a = abs(A[k * n + i])
            if a > colmax:
                colmax, imax = a, i
        if not (absakk > 0.0 or colmax > 0.0):
            # a zero (or NaN) column: no pivot; LAPACK's info > 0
            piv[k] = k
            nzero += 1
            k += 1
            continue
        kp = k
        if absakk < BK_ALPHA * colmax:
            rowmax = 0.0
            for j in range(k, imax):
                rowmax = max(rowmax, abs(A[j * n + imax]))
            for i in range(imax + 1, n):
                rowmax = max(rowmax, abs(A[imax * n + i]))
            if absakk * rowmax >= BK_ALPHA * colmax * colmax:
                kp = k
            elif abs(A[imax * n + imax]) >= BK_ALPHA * rowmax:
                kp = imax
            else:
                kp = imax
                kstep = 2
        kk = k + kstep - 1
        if kp != kk:
            _swap(A, n, k, kk, kp)
            t = mass[kk]
            mass[kk] = mass[kp]
            mass[kp] = t
        if kstep == 1:
            d = A[k * n + k]
            piv[k] = kp
            if not abs(d) > PIVOT_CANCELLATION * mass[k]:
                nzero += 1          # (or NaN)
            elif d > 0.0:
                npos += 1
            else:
                nneg += 1
            r1 = 1.0 / d
            for j in range(k + 1, n):
                t = r1 * A[k * n + j]
                mass[j] += abs(A[k * n + j] * t)
                for i in range(j, n):
                    A[j * n + i] -= A[k * n + i] * t
            for i in range(k + 1, n):
                A[k * n + i] *= r1
        else:
            a = A[k * n + k]
            b = A[k * n + k + 1]
            c = A[(k + 1) * n + k + 1]
            piv[k] = -(kp + 1)
            piv[k + 1] = -(kp + 1)
            # (|a c| < alpha^2 b^2: det < -(1 - alpha^2) b^2, never a cancellation)
            det = a * c - b * b
            if det < 0.0:
                npos += 1
                nneg += 1
            elif det > 0.0 and a > 0.0:
                npos += 2
            elif det > 0.0:
                nneg += 2
            else:
                nzero += 2          # (NaN)
            if k < n - 2:
                d21 = b
                d11 = c / d21
                d22 = a / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * A[k * n + j] - A[(k + 1) * n + j])
                    wkp1 = d21 * (d22 * A[(k + 1) * n + j] - A[k * n + j])
                    mass[j] += abs(A[k * n + j] * wk) + abs(A[(k + 1) * n + j] * wkp1)
                    for i in range(j, n):
                        A[j * n + i] -= A[k * n + i] * wk + A[(k + 1) * n + i] * wkp1
                    A[k * n + j] = wk
                    A[(k + 1) * n + j] = wkp1
        k += kstep
    return npos, nneg, nzero


@kernel
def bk_solve(Fb, FO, Ib, IO, b, x):
    """x = K^{-1} b through the factors of :func:`bk_factor` (LAPACK dsytrs, lower):
    P, L^{-1}, D^{-1}, L^{-T}, P^T.  ``x`` may be ``b``."""
    n = _i(Ib, IO, I_SIZES)[SZ_NKKT]
    if x is not b:
        for i in range(n):
            x[i] = b[i]
    bk_solve_dense(n, _f(Fb, FO, F_BK_A), _f(Fb, FO, F_BK_PIV), x)


@kernel
def bk_solve_dense(n, A, piv, x):
    """``x <- K^{-1} x`` through :func:`bk_factor_dense`'s factors (``A``, ``piv``)."""
    k = 0
    while k < n:
        if piv[k] >= 0.0:
            kp = int(piv[k])
            if kp != k:
                t = x[k]
                x[k] = x[kp]
                x[kp] = t
            xk = x[k]
            for i in range(k + 1, n):
                x[i] -= A[k * n + i] * xk
            x[k] = xk / A[k * n + k]
            k += 1
        else:
            kp = int(-piv[k]) - 1
            if kp != k + 1:
                t = x[k + 1]
                x[k + 1] = x[kp]
                x[kp] = t
            x0 = x[k]
            x1 = x[k + 1]
            for i in range(k + 2, n):
                x[i] -= A[k * n + i] * x0 + A[(k + 1) * n + i] * x1
            akm1k = A[k * n + k + 1]
            akm1 = A[k * n + k] / akm1k
            ak = A[(k + 1) * n + k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = x0 / akm1k
            bk = x1 / akm1k
            x[k] = (ak * bkm1 - bk) / denom
            x[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:
        if piv[k] >= 0.0:
            s = x[k]
            for i in range(k + 1, n):
                s -= A[k * n + i] * x[i]
            x[k] = s
            kp = int(piv[k])
            if kp != k:
                t = x[k]
                x[k] = x[kp]
                x[kp] = t
            k -= 1
        else:
            s1 = x[k]
            s0 = x[k - 1]
            for i in range(k + 1, n):
                s1 -= A[k * n + i] * x[i]
                s0 -= A[(k - 1) * n + i] * x[i]
            x[k] = s1
            x[k - 1] = s0
            kp = int(-piv[k]) - 1
            if kp != k:
                t = x[k]
                x[k] = x[kp]
                x[kp] = t
            k -= 2


@parallel_kernel
def bk_factor_rows(amap, values, A, piv, mass, active, counts):
    """:func:`bk_factor` for the instances ``active`` of a batch (the lockstep path's
    small K, batch/ldl.py), on Numba's threads: row b of ``values`` (B, nnz) scattered
    through ``amap`` (the BK_MAP slot) into row b of ``A`` (B, n n) and factorized;
    ``piv``, ``mass`` (B, n); ``counts`` (3, B) int64 gets (n_pos, n_neg, n_zero)."""
    n = piv.shape[1]
    for t in prange(active.shape[0]):
        b = active[t]
        Ab = A[b]
        for i in range(n * n):
            Ab[i] = 0.0
        for p in range(amap.shape[0]):
            Ab[amap[p]] = values[b, p]
        npos, nneg, nzero = bk_factor_dense(n, Ab, piv[b], mass[b])
        counts[0, b] = npos
        counts[1, b] = nneg
        counts[2, b] = nzero


@parallel_kernel
def bk_solve_rows(A, piv, rhs, out):
    """Row b of ``out`` (B, n) = K_b^{-1} (row b of ``rhs``) for every b (``out`` may be
    ``rhs``)."""
    n = piv.shape[1]
    for b in prange(rhs.shape[0]):
        xb = out[b]
        rb = rhs[b]
        for i in range(n):
            xb[i] = rb[i]
        bk_solve_dense(n, A[b], piv[b], xb)
