"""The dense Bunch-Kaufman factorization of a small K in NumPy, for the solves that do
not load the compiled kernels.

The qdldl linear solver factorizes a small K (:func:`.dense_kkt.small_pivoting`) with
the kernels' :mod:`caspar_backend.compiled.kernels.bunch_kaufman` (its module docstring
has the algorithm, the zero-pivot rule and the storage).  The first solve of a process
does not load the kernels (:func:`caspar_backend.compiled.dispatch.general_path_kernels`);
:class:`HostBunchKaufman` runs there: the same floating-point operations in the same
order, vectorized over the trailing matrix, so its factors, inertia and solutions are
the kernels' bit for bit (tests/linsolve/test_bunch_kaufman.py) and a solve's iterates
do not depend on whether the kernels were loaded.

Array formats: ``values`` K's stored upper triangle (CSC of ``structure``, stored
order); the factors in ``A`` (N, N) with ``A[j, i]`` = entry (i, j), i >= j, of the
column-major lower triangle (the kernels' F_BK_A, row j of ``A`` = column j of L);
``piv`` float (N,) as the kernels' F_BK_PIV.
"""

from __future__ import annotations

import math

import numpy as np

#: as the kernels' (``compiled/kernels/bunch_kaufman.py``, not imported: it needs Numba)
BK_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0
PIVOT_CANCELLATION = 1e-14
#: |d| / mass of every 1x1 pivot factorized (this copy of linsolve/bunch_kaufman.py records them)
RATIOS = []


class HostBunchKaufman:
    """Final.  One solver's dense Bunch-Kaufman factorization of K (the structure's N x N
    buffers its own)."""

    def __init__(self, structure):
        n = self.n = int(structure.n)
        rows = np.asarray(structure.indices, np.int64)
        cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(structure.indptr))
        self._map = rows * n + cols         # (row r <= column c) -> A[r, c]
        self.A = np.zeros((n, n))
        self.piv = np.zeros(n)

    def factorize(self, values) -> tuple:
        """``(n_pos, n_neg, n_zero)`` of K (n_zero > 0: singular, do not solve)."""
        n, A, piv = self.n, self.A, self.piv
        values = np.asarray(values, np.float64)
        A[:] = 0.0
        A.ravel()[self._map] = values
        mass = np.abs(np.diagonal(A)).copy()
        npos = nneg = nzero = 0
        k = 0
        while k < n:
            kstep = 1
            absakk = abs(A[k, k])
            imax, colmax = k, 0.0
            if k + 1 < n:
                col = np.abs(A[k, k + 1:])
                with np.errstate(invalid="ignore"):
                    col = np.where(col > 0.0, col, 0.0)
                j = int(np.argmax(col))
                if col[j] > 0.0:
                    imax, colmax = k + 1 + j, float(col[j])
            if not (absakk > 0.0 or colmax > 0.0):
                piv[k] = k
                nzero += 1
                k += 1
                continue
            kp = k
            if absakk < BK_ALPHA * colmax:
                rowmax = _max_of(np.abs(A[k:imax, imax]), np.abs(A[imax, imax + 1:]))
                if absakk * rowmax >= BK_ALPHA * colmax * colmax:
                    kp = k
                elif abs(A[imax, imax]) >= BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _swap(A, k, kk, kp)
                mass[kk], mass[kp] = mass[kp], mass[kk]
            if kstep == 1:
                d = float(A[k, k])
                piv[k] = kp
                RATIOS.append(abs(d) / mass[k] if mass[k] > 0 else 1.0)
                if not abs(d) > PIVOT_CANCELLATION * mass[k]:
                    nzero += 1
                elif d > 0.0:
                    npos += 1
                else:
                    nneg += 1
                r1 = 1.0 / d
                with np.errstate(all="ignore"):
                    t = r1 * A[k, k + 1:]
                    mass[k + 1:] += np.abs(A[k, k + 1:] * t)
                    A[k + 1:, k + 1:] -= np.outer(t, A[k, k + 1:])
                    A[k, k + 1:] *= r1
            else:
                a, b, c = float(A[k, k]), float(A[k, k + 1]), float(A[k + 1, k + 1])
                piv[k] = piv[k + 1] = -(kp + 1)
                det = a * c - b * b
                if det < 0.0:
                    npos += 1
                    nneg += 1
                elif det > 0.0 and a > 0.0:
                    npos += 2
                elif det > 0.0:
                    nneg += 2
                else:
                    nzero += 2
                if k < n - 2:
                    d21 = b
                    d11 = c / d21
                    d22 = a / d21
                    t = 1.0 / (d11 * d22 - 1.0)
                    d21 = t / d21
                    with np.errstate(all="ignore"):
                        ak, ak1 = A[k, k + 2:].copy(), A[k + 1, k + 2:].copy()
                        wk = d21 * (d11 * ak - ak1)
                        wkp1 = d21 * (d22 * ak1 - ak)
                        mass[k + 2:] += np.abs(ak * wk) + np.abs(ak1 * wkp1)
                        A[k + 2:, k + 2:] -= np.outer(wk, ak) + np.outer(wkp1, ak1)
                    A[k, k + 2:] = wk
                    A[k + 1, k + 2:] = wkp1
            k += kstep
        return npos, nneg, nzero

    def solve(self, b, out=None):
        """``K^{-1} b`` through the last factorization (a new array, or ``out``)."""
        n, A, piv = self.n, self.A, self.piv
        x = np.array(b, np.float64)
        k = 0
        while k < n:
            if piv[k] >= 0.0:
                kp = int(piv[k])
                x[k], x[kp] = x[kp], x[k]
                xk = x[k]
                x[k + 1:] -= A[k, k + 1:] * xk
                x[k] = xk / A[k, k]
                k += 1
            else:
                kp = int(-piv[k]) - 1
                x[k + 1], x[kp] = x[kp], x[k + 1]
                x0, x1 = x[k], x[k + 1]
                x[k + 2:] -= A[k, k + 2:] * x0 + A[k + 1, k + 2:] * x1
                akm1k = A[k, k + 1]
                akm1 = A[k, k] / akm1k
                ak = A[k + 1, k + 1] / akm1k
                denom = akm1 * ak - 1.0
                bkm1 = x0 / akm1k
                bk = x1 / akm1k
                x[k] = (ak * bkm1 - bk) / denom
                x[k + 1] = (akm1 * bk - bkm1) / denom
                k += 2
        k = n - 1
        while k >= 0:
            # the kernel's running differences, left to right (subtract.reduce folds in
            # order; a dot product would sum in another)
            if piv[k] >= 0.0:
                x[k] = _fold(x[k], A[k, k + 1:] * x[k + 1:])
                kp = int(piv[k])
                x[k], x[kp] = x[kp], x[k]
                k -= 1
            else:
                s1 = _fold(x[k], A[k, k + 1:] * x[k + 1:])
                s0 = _fold(x[k - 1], A[k - 1, k + 1:] * x[k + 1:])
                x[k], x[k - 1] = s1, s0
                kp = int(-piv[k]) - 1
                x[k], x[kp] = x[kp], x[k]
                k -= 2
        if out is None:
            return x
        out[:] = x
        return out


def _fold(s, terms):
    """``(((s - t0) - t1) - ...)``, in that order."""
    if len(terms) == 0:
        return s
    return np.subtract.reduce(np.concatenate(([s], terms)))


def _max_of(u, v) -> float:
    """The kernel's running ``max(rowmax, |a|)`` over u then v, from 0."""
    m = 0.0
    for part in (u, v):
        if len(part):
            m = max(m, float(np.max(part)))
    return m


def _swap(A, k, kk, kp):
    """The kernel's ``_swap``: rows and columns kk < kp of the trailing lower triangle."""
    t = A[kk, kp + 1:].copy()
    A[kk, kp + 1:] = A[kp, kp + 1:]
    A[kp, kp + 1:] = t
    t = A[kk, kk + 1:kp].copy()
    A[kk, kk + 1:kp] = A[kk + 1:kp, kp]
    A[kk + 1:kp, kp] = t
    A[kk, kk], A[kp, kp] = A[kp, kp], A[kk, kk]
    if kk > k:
        A[k, kk], A[k, kp] = A[k, kp], A[k, kk]
