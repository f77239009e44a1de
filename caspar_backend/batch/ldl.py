"""Batched sparse LDL^T with inertia: B symmetric matrices of one pattern at once.

For ``b = 0..B-1``::

    P K_b P^T = (I + L_b) D_b (I + L_b)^T

with one fill-reducing permutation P for all instances (given, e.g. QDLDL's own AMD
order; else minimum degree, :mod:`.ldl_order`), L_b strictly lower triangular with the
pattern of the symbolic factor, D_b diagonal, and no pivoting: QDLDL's factorization
(:mod:`caspar_backend.linsolve.qdldl`) for every instance at once, operation for
operation (:mod:`.ldl_symbolic` states the order), so that in QDLDL's permutation the
factors, solves and products (:meth:`BatchLDL.matvec`: the single path's
``QDLDLSolver.matvec``) are the single path's bit for bit.  By Sylvester's law
the signs of D_b give K_b's inertia.  A pivot that is exactly 0 or not finite makes
that instance's factorization fail: it and every later pivot (in elimination order)
count as zero, ``n_zero > 0``; the instance's solves are then garbage (inf/nan), and no
other instance's numbers change.  (QDLDL stops at its first zero pivot and goes on
past non-finite ones, and the single path reports ``(0, 0, N)`` when qdldl raises: on a
failed factorization both say ``n_zero > 0``, but the counts may differ.)

Array formats (``xp`` is NumPy or CuPy; every array lives in ``xp``):

* ``values``: float64 (B, nnz), row b = instance b's entries in the order of
  ``structure.indices`` (the upper triangle in CSC, every diagonal present);
* ``rhs``, ``x``, results of :meth:`BatchLDL.solve` / :meth:`BatchLDL.matvec`:
  float64 (B, N), row b = instance b;
* inertia: three int64 (B,) arrays ``(n_pos, n_neg, n_zero)``.

A small K on the host (:func:`~caspar_backend.linsolve.dense_kkt.small_pivoting`) is
factorized instead as the single CPU path factorizes it, densely with Bunch-Kaufman
pivoting (:class:`_BunchKaufmanRows`); the products stay the ones below.

The symbolic phase (:mod:`.ldl_symbolic`) runs once, on the host, at construction;
:mod:`.ldl_host` (NumPy: level-scheduled over the elimination tree, vectorized over the
batch) and :mod:`.ldl_device` (CuPy: one thread per instance) are the numeric phases,
equal bit for bit.
"""

from __future__ import annotations

import numpy as np

from ..arrays.xp import is_host
from ..linsolve.base import SparseStructure
from ..linsolve.dense_kkt import small_pivoting
from .ldl_symbolic import plan_ldl


class BatchLDL:
    """Final.  ``P K_b P^T = (I + L_b) D_b (I + L_b)^T`` for b = 0..B-1, one pattern.

    ``structure``: the pattern (:class:`SparseStructure`); ``batch_size``: B; ``xp``:
    numpy or cupy; ``perm``: an int64 (N,) elimination order (``perm[k]`` = the
    original index eliminated k-th), None for minimum degree."""

    def __init__(self, structure: SparseStructure, batch_size: int, xp=np, perm=None,
                 plan=None, dense=None):
        self.structure = structure
        self.xp = xp
        # ``plan``: the symbolic analysis of another BatchLDL of this structure (reused)
        self.plan = plan_ldl(structure, perm) if plan is None else plan
        self.n = self.plan.n
        self.nnz = self.plan.nnz
        self.batch_size = int(batch_size)
        #: a small K on the host is factorized as the single CPU path factorizes it:
        #: dense Bunch-Kaufman (module doc; ``dense`` given: as another BatchLDL's)
        self.dense = (is_host(xp) and small_pivoting(self.n)) if dense is None else dense
        #: every factorization pivots (the KKT system then takes no static term)
        self.pivots = bool(self.dense)
        if is_host(xp):
            from .ldl_host import HostLDL

            self._engine = HostLDL(self.plan, self.batch_size)
            if self.dense:
                self._bk = _BunchKaufmanRows(structure, self.batch_size)
        else:
            from .ldl_device import DeviceLDL

            self._engine = DeviceLDL(self.plan, self.batch_size, xp)

    @property
    def nnz_l(self) -> int:
        """Structural nonzeros of L (strictly lower, fill included)."""
        return self.plan.nnz_l

    @property
    def n_levels(self) -> int:
        """Height of the elimination tree plus one: the NumPy backend's steps."""
        return self.plan.n_levels

    def _check(self, a, shape, name):
        if tuple(a.shape) != shape:
            raise ValueError(f"{name} has shape {tuple(a.shape)}, expected {shape}")

    def factorize(self, values, active=None):
        """Factorize ``K_b`` (``values`` (B, nnz)) for the instances ``active`` (None:
        all; else an int64 array of distinct indices in [0, B)); the other instances
        keep their factors.  Returns ``(n_pos, n_neg, n_zero)``, int64 (B,) each, the
        inertia of every instance's current factors (``(0, 0, N)`` before its first
        factorization).  These are the object's own arrays, overwritten by the next
        call (no copies: on the device a copy is a launch): copy them to keep them."""
        xp, e = self.xp, self._engine
        values = xp.asarray(values, dtype=xp.float64)
        self._check(values, (self.batch_size, self.nnz), "values")
        if active is not None:
            active = xp.asarray(active, dtype=xp.int64).reshape(-1)
            # one check (one device synchronization): an index out of range would be
            # an out-of-bounds access in the kernel
            if active.size and bool(((active < 0) | (active >= self.batch_size)).any()):
                raise ValueError("active holds an index outside [0, batch_size)")
            if is_host(xp):
                active = np.ascontiguousarray(active)
        if is_host(xp):
            values = np.ascontiguousarray(values)
        if self.dense:
            return self._bk.factorize(values, active)
        e.factorize(values, active)
        return e.n_pos, e.n_neg, e.n_zero

    def factors(self, b: int):
        """Instance b's current factors in the form of qdldl's ``Solver.factors()``:
        ``(L, d, perm)``, L a SciPy CSC (N, N) matrix, strictly lower, in elimination
        indices with rows increasing in each column; d float64 (N,) the pivots in
        elimination order; perm int64 (N,) (``perm[k]`` = the original index
        eliminated k-th).  Host arrays (copied from the device for CuPy)."""
        import scipy.sparse as sp

        pl = self.plan
        if self.dense:
            raise ValueError("a small K is factorized densely (Bunch-Kaufman): no "
                             "QDLDL factors")
        if not 0 <= int(b) < self.batch_size:
            raise ValueError(f"instance {b} is outside [0, {self.batch_size})")
        lx, d = self._engine.factor_values(int(b))
        L = sp.csc_matrix((lx, pl.li.copy(), pl.lp.copy()), shape=(pl.n, pl.n))
        return L, d, pl.perm.copy()

    def solve(self, rhs, out=None):
        """``x_b = K_b^{-1} rhs_b`` with each instance's current factors: rhs float64
        (B, N) -> x (B, N) (``out`` when given; it may be ``rhs`` itself).  Rows of
        instances whose last factorization failed are garbage."""
        xp = self.xp
        rhs = xp.asarray(rhs, dtype=xp.float64)
        self._check(rhs, (self.batch_size, self.n), "rhs")
        if out is not None:
            self._check(out, (self.batch_size, self.n), "out")
        if self.dense:
            return self._bk.solve(np.ascontiguousarray(rhs), out)
        return self._engine.solve(rhs, out)

    def matvec(self, values, x, out=None):
        """``K_b x_b`` for every b, both triangles of K_b (``values`` (B, nnz) upper
        CSC, x (B, N)) -> (B, N) (``out`` when given; it may be ``x`` itself).

        Summed as the single path's ``QDLDLSolver.matvec``, bit for bit: with U the
        upper triangle, ``(U x + U^T x) - diag(U) * x``, where ``(U x)_i`` accumulates
        ``U_ij x_j`` from 0 in CSC order (SciPy's csc_matvec) and ``(U^T x)_j`` sums
        column j's ``U_ij x_i`` from 0 in CSC order (csr_matvec on the same arrays)."""
        xp = self.xp
        values = xp.asarray(values, dtype=xp.float64)
        x = xp.asarray(x, dtype=xp.float64)
        self._check(values, (self.batch_size, self.nnz), "values")
        self._check(x, (self.batch_size, self.n), "x")
        if out is not None:
            self._check(out, (self.batch_size, self.n), "out")
        if is_host(xp):
            values, x = np.ascontiguousarray(values), np.ascontiguousarray(x)
        return self._engine.matvec(values, x, out)


class _BunchKaufmanRows:
    """Final.  The dense Bunch-Kaufman factors of B small K's (the kernels'
    :mod:`caspar_backend.compiled.kernels.bunch_kaufman`, one instance per row, on
    Numba's threads): each instance's factors, inertia and solves are the single CPU
    path's bit for bit.  Host arrays: ``A`` (B, N N), ``piv``/``mass`` (B, N), the
    inertia ``counts`` (3, B) int64 ((0, 0, N) before an instance's first
    factorization)."""

    def __init__(self, structure, B):
        from ..compiled.workspace_layout import bk_int_slots

        n = structure.n
        self.amap = bk_int_slots(np.asarray(structure.indptr, np.int64),
                                 np.asarray(structure.indices, np.int64))["BK_MAP"]
        self.A = np.zeros((B, n * n))
        self.piv = np.zeros((B, n))
        self.mass = np.zeros((B, n))
        self.counts = np.zeros((3, B), np.int64)
        self.counts[2] = n
        self._all = np.arange(B, dtype=np.int64)

    def factorize(self, values, active):
        from ..compiled.kernels.bunch_kaufman import bk_factor_rows

        bk_factor_rows(self.amap, values, self.A, self.piv, self.mass,
                       self._all if active is None else active, self.counts)
        return self.counts[0], self.counts[1], self.counts[2]

    def solve(self, rhs, out):
        from ..compiled.kernels.bunch_kaufman import bk_solve_rows

        x = np.empty_like(rhs) if out is None else out
        bk_solve_rows(self.A, self.piv, rhs, x)
        return x
