"""QDLDL's factorization through the compiled kernels, for the general path's linear solver.

The general path's ``linear_solver='qdldl'`` (:mod:`caspar_backend.linsolve.qdldl`)
factorizes its unpivoted K with the qdldl package: one C call, but each ``factors()``
builds L as a SciPy matrix to hand back D (SciPy's constructor and format checks, ~60 us
a call, a fifth of a small problem's iteration on the 2-core VM).  The compiled kernels
run QDLDL's numeric factorization and solve themselves (:mod:`.kernels.qdldl`: QDLDL's
operations in QDLDL's order on qdldl-python's AMD order and entry order, so the factors
and solutions are the package's bit for bit), from a symbolic analysis done once per
pattern.  A small K (:func:`~caspar_backend.linsolve.dense_kkt.small_pivoting`) is
factorized instead by the kernels' dense Bunch-Kaufman (:mod:`.kernels.bunch_kaufman`),
as the compiled path factorizes it.  :class:`LDLTables` is that analysis in the kernels'
slot format (only the factorization's slots have entries); :class:`KernelLDL` a
factorization of one solver,
its float workspace its own (solvers of one structure in different threads share the
tables only).

Array formats: ``values`` as the general path's K (the upper triangle of its
:class:`~caspar_backend.linsolve.base.SparseStructure`, CSC, values in stored order);
``b``, the solution: float64 (N,).
"""
from __future__ import annotations

import numpy as np

from .kernels import slots
from .structure import symperm_upper
from .workspace_layout import _pack, bk_float_sizes, bk_int_slots, ldl_int_slots


class LDLTables:
    """Final.  The symbolic analysis of one K pattern (``structure``, a
    :class:`~caspar_backend.linsolve.base.SparseStructure`): qdldl-python's AMD order
    (:func:`caspar_backend.batch.kkt.qdldl_order`), the permuted pattern and
    :func:`ldl_int_slots`, packed as ``Ib``/``IO``; ``FO`` the float offsets -- or, with
    ``dense`` (a small K), the slots of the dense Bunch-Kaufman factorization.
    Raises ImportError without qdldl (its order is the one to reproduce)."""

    def __init__(self, structure, dense: bool = False):
        n = structure.n
        Kp = np.asarray(structure.indptr, np.int64)
        Ki = np.asarray(structure.indices, np.int64)
        ints = dict.fromkeys(slots.INT_SLOTS, 0)
        floats = dict.fromkeys(slots.FLOAT_SLOTS, 0)
        sizes = np.zeros(len(slots.SIZE_FIELDS), np.int64)
        sizes[slots.SIZE_FIELDS.index("nkkt")] = n
        #: whether K is factorized densely with Bunch-Kaufman pivoting (a small K:
        #: :func:`~caspar_backend.linsolve.dense_kkt.small_pivoting`), else by QDLDL
        self.dense = bool(dense)
        nnzL = 0
        if self.dense:
            sizes[slots.SIZE_FIELDS.index("dense_bk")] = 1
            ints.update(bk_int_slots(Kp, Ki), K_INDPTR=Kp, K_INDICES=Ki)
            floats.update(bk_float_sizes(n, True))
        else:
            from ..batch.kkt import qdldl_order

            perm = qdldl_order(structure, n)      # (AMD reads only the pattern)
            if perm is None:
                raise ImportError("qdldl's elimination order needs qdldl (pip install "
                                  "qdldl)")
            Cp, Ci, cmap = symperm_upper(Kp, Ki, perm)
            ints.update(ldl_int_slots(Cp, Ci), C_INDPTR=Cp, C_INDICES=Ci, C_MAP=cmap,
                        PERM=perm)
            nnzL = len(ints["L_INDICES"])
            floats.update(C_VALUES=len(Ki), L_VALUES=nnzL, LDL_D=n, LDL_DINV=n,
                          LDL_YVALS=n, LDL_T=n)
        ints["SIZES"] = sizes
        self.Ib, self.IO = _pack(ints, slots.INT_SLOTS, np.int64)
        self.FO = _pack(floats, slots.FLOAT_SLOTS, np.float64)[1]
        self.n, self.nnz, self.nnzL = n, len(Ki), nnzL


class KernelLDL:
    """Final.  One solver's factorization of K through the kernels (module docstring)."""

    def __init__(self, tables: LDLTables):
        if tables.dense:
            from .kernels.bunch_kaufman import bk_factor as factor
            from .kernels.bunch_kaufman import bk_solve as solve
        else:
            from .kernels.qdldl import ldl_factor as factor
            from .kernels.qdldl import ldl_solve as solve

        self.tables = tables
        self._Fb = np.zeros(max(int(tables.FO[-1]), 1))
        self._factor, self._solve = factor, solve

    def factorize(self, values) -> tuple:
        """``(n_pos, n_neg, n_zero)`` of D (non-finite entries counted as zero); ``(0, 0,
        N)`` at an exact zero pivot, where QDLDL stops."""
        t = self.tables
        v = values if (values.dtype == np.float64 and values.flags.c_contiguous
                       and values.flags.writeable) else np.array(values, np.float64)
        return self._factor(self._Fb, t.FO, t.Ib, t.IO, v)

    def dense_factors(self) -> np.ndarray:
        """The dense Bunch-Kaufman factors (a view, (N, N), laid out as
        :class:`caspar_backend.linsolve.bunch_kaufman.HostBunchKaufman`'s ``A``) of a small
        K's tables (:attr:`LDLTables.dense`)."""
        t = self.tables
        k = slots.FLOAT_SLOTS.index("BK_A")
        return self._Fb[t.FO[k]:t.FO[k + 1]].reshape(t.n, t.n)

    def solve(self, b, out=None):
        """``K^{-1} b`` through the last factorization (a new array, or ``out``)."""
        t = self.tables
        x = out if (out is not None and out.dtype == np.float64
                    and out.flags.c_contiguous and out.flags.writeable) else np.empty(t.n)
        b = b if (b.dtype == np.float64 and b.flags.c_contiguous
                  and b.flags.writeable) else np.array(b, np.float64)
        self._solve(self._Fb, t.FO, t.Ib, t.IO, b, x)
        if out is not None and x is not out:
            out[:] = x
            return out
        return x
