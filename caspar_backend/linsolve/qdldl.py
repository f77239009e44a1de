"""LDL^T with inertia through the PyPI ``qdldl`` package (QDLDL, OSQP's factorization).

QDLDL factors ``P K P^T = (I + L) D (I + L)^T`` with an AMD ordering ``P`` and a
**diagonal** D, without pivoting: the ordering and the elimination tree are computed once
(:meth:`analyse`), later matrices with the same pattern are refactorized numerically
(``Solver.update``).  Because D is diagonal, Sylvester's law gives the exact inertia from
the signs of D.  Without pivoting a zero (or tiny) pivot can occur on a nonsingular
indefinite matrix; QDLDL then stops and leaves the remaining pivots at zero, which we
report as ``n_zero > 0``.  The interior-point method reacts as for a singular matrix, by
adding the dual regularization ``-delta_c I`` (and, if needed, ``delta_w I``), which makes
the augmented system quasi-definite and always factorizable without pivoting.

Without pivoting, a pivot that is small only relative to the entries eliminated before it
is lost to cancellation: in ``[[delta_w I, A^T], [A, -delta_c I]]`` with a rank-deficient
``A`` the pivots of ``A``'s null space are ``delta_w - (a - a)`` with ``a ~ |A|^2/delta_c``,
so any ``delta_w`` below ``~1e-16 |A|^2/delta_c`` comes out as an exact zero, and the
inertia correction can never lower ``delta_w`` below that floor (IPOPT's MUMPS pivots
and lowers it to 1e-20).  :meth:`QDLDLSolver.enable_pivoting` switches a
small system (``N <= DENSE_PIVOTING_MAX_N``) to LAPACK's dense Bunch-Kaufman LDL^T
(``dsytrf``/``dsytrs``: 1x1 and 2x2 pivots, inertia from D's blocks) for the rest of the
solve, a larger one to MKL's PARDISO (:mod:`.pardiso_mkl`: supernodal Bunch-Kaufman
after weighted matching) where MKL is installed.  A K that is dense to begin with
(:func:`dense_kkt`: single shooting's Hessian) takes the dense factorization from its
first one: LAPACK's blocked elimination is ~10x QDLDL's on a dense matrix.

**A small K** (:func:`.dense_kkt.small_pivoting`: at most ``SMALL_PIVOTING_MAX_N`` rows)
is factorized from its first factorization as IPOPT's MUMPS factorizes every K: densely,
with Bunch-Kaufman pivoting and exact inertia, and without a static term (``pivots``
is True after :meth:`QDLDLSolver.analyse`; the interior point then sets eps = 0 unless
the user set ``kkt_static_regularization``).  The static term's error in the directions
of K's eigenvalues below it is what refinement cannot remove on a badly scaled model
(Pyomo's parmest reactor_design: max_iter where IPOPT converges in 34-62 iterations;
with the dense factorization IPOPT's exact counts), and at this size the dense
factorization costs about what QDLDL's does (measured per factorization on the 2-core
VM: N = 16 1.4 us against 0.6, N = 32 5.6 against 1.3, N = 48 16 against 1.5; N = 64
would take 35).  The kernels' :mod:`caspar_backend.compiled.kernels.bunch_kaufman` runs
it (the compiled path's too, so both paths factorize bit for bit alike), its NumPy twin
:mod:`.bunch_kaufman` where the kernels are not loaded (a process's first solve).  A
condensed KKT matrix is not a saddle point: it keeps QDLDL (``small_pivoting`` off).

When refinement against K fails with every static term, the factors themselves are the
trouble (element growth without pivoting; Pyomo's lqcp example at n = 100: refinement
stagnating at every eps, the primal infeasibility stuck at 1.5e-7 and the solve ending
"acceptable" 2.6e-3 from IPOPT's objective).  The inertia correction then switches to
the pivoting mode above (solver/inertia.py), the inertia reported by qdldl being as
doubtful as its solves; where there is none (a large system without MKL),
:meth:`QDLDLSolver.factorize_accurate` factorizes K itself once with SuperLU (SciPy's
``splu``: sparse LU with partial pivoting, COLAMD column order) for that iteration's
solves; qdldl's factorization still gives the inertia, which an LU ``P K Q = L U`` does
not.

The symbolic analysis is shared by the solves of a structure (:class:`QDLDLSymbolic`,
kept in the compiled problem's structure cache): a ``qdldl.Solver`` object holds the
AMD order and the elimination tree of its pattern, computed once by its constructor,
and its last numeric factors; ``update`` with another matrix of the same pattern redoes
only the numeric factorization.  A solve borrows an idle object of its structure for its
first factorization and gives it back at its end (:meth:`QDLDLSolver.release`), so
that a re-solve does no AMD and no elimination tree.  Its factors are those of a new
object, bit for bit: AMD and the elimination tree depend on the pattern alone, and
``update`` rewrites every permuted value and every entry of L and D that the numeric
factorization reads -- except after a zero pivot, where QDLDL stops and leaves the
following entries of D as the last factorization left them; the constructor raises
there instead, and so does a borrowed object's first factorization
(:meth:`QDLDLSolver._first_factorization`), so that no solve reads another solve's
values.
"""

from __future__ import annotations

import copy
import threading

import numpy as np
import scipy.sparse as sp

from .base import Factorization, LinearSolver, SparseStructure
from .blas_threads import single_threaded_blas
from .dense_kkt import DENSE_KKT_FILL, DENSE_KKT_MAX_N, DENSE_KKT_MIN_N, dense_kkt  # noqa: F401
from .dense_kkt import small_pivoting as small_k
from .upper_matvec import UpperTriangleMatvec

#: largest N for which :meth:`QDLDLSolver.enable_pivoting` switches to the dense
#: pivoting factorization (an N x N dense matrix, O(N^3) per factorization; PARDISO from
#: fewer rows is faster per factorization but pivots differently: docs/pivoting-switch.md)
DENSE_PIVOTING_MAX_N = 1000
#: from this N on the dense mode is left again at the next iteration
#: (:meth:`QDLDLSolver.leave_pivoting`): its factorization then costs more than the rest
#: of an iteration (~2 ms at N = 500, 13 ms at N = 899 on the 2-core VM, QDLDL's a few
#: tenths), so it serves only the iterations whose unpivoted factorization fails.  Below,
#: it stays for the rest of the solve: cheap, and the steadier path (hs061, N = 5: 13
#: iterations staying, 24 leaving and switching back five times; IPOPT 9)
DENSE_PIVOTING_LEAVE_MIN_N = 500
#: largest N for which :meth:`QDLDLSolver.factorize_accurate` runs SuperLU (its fill
#: on a large KKT matrix can exceed the memory qdldl's factors need many times over)
ACCURATE_LU_MAX_N = 300_000


def _bunch_kaufman_inertia(ldu, ipiv) -> tuple:
    """(positive, negative) eigenvalue counts of D in LAPACK's ``dsytrf`` (lower) of a
    symmetric K = L D L^T (Sylvester: K's inertia).  D has 1x1 blocks and 2x2 blocks
    [[a, b], [b, c]] in rows i, i+1 marked by ipiv[i] = ipiv[i+1] < 0 (1-based); within
    a run of negative entries the blocks start at even offsets.  A 2x2 block with
    det = ac - b^2 < 0 has one eigenvalue of each sign, with det > 0 two of a's sign,
    with det = 0 one of the trace's sign and a zero.  Non-finite values count as
    neither sign."""
    n = len(ipiv)
    if n == 0:
        return 0, 0
    d = np.diag(ldu)
    neg = np.asarray(ipiv) < 0
    # offset of each entry within its run of consecutive negative ipiv entries
    idx = np.arange(n)
    run_start = np.maximum.accumulate(np.where(neg & ~np.r_[False, neg[:-1]], idx, 0))
    first = neg & ((idx - run_start) % 2 == 0)
    first[-1] = False                      # (a block needs a second row)
    second = np.r_[False, first[:-1]]
    one = ~(first | second)
    n_pos = int(np.count_nonzero(d[one] > 0))
    n_neg = int(np.count_nonzero(d[one] < 0))
    i = np.flatnonzero(first)
    a, c, b = d[i], d[i + 1], ldu[i + 1, i]
    det, tr = a * c - b * b, a + c
    n_pos += int(np.count_nonzero(det < 0) + 2 * np.count_nonzero((det > 0) & (a > 0))
                 + np.count_nonzero((det == 0) & (tr > 0)))
    n_neg += int(np.count_nonzero(det < 0) + 2 * np.count_nonzero((det > 0) & (a < 0))
                 + np.count_nonzero((det == 0) & (tr < 0)))
    return n_pos, n_neg


class QDLDLSymbolic:
    """Final.  qdldl's symbolic work on one structure, for every solver of it: the CSC
    index arrays as the solvers' matrices hold them (int32, never written), the
    positions of the diagonal entries, and idle ``qdldl.Solver`` objects of the
    structure (AMD order and elimination tree done; module doc).  :meth:`take` hands an
    idle object to one solver, :meth:`give` takes it back; each object serves one solve
    at a time."""

    #: idle objects kept: each holds the memory of a factorization between solves (L of
    #: a large problem can be gigabytes), so one; concurrent solves beyond it analyse
    #: their own
    MAX_IDLE = 1

    def __init__(self, structure: SparseStructure):
        self.structure = structure
        self.indptr32 = structure.indptr.astype(np.int32)
        self.indices32 = structure.indices.astype(np.int32)
        # the diagonal is the last entry of each column (upper triangle, sorted rows,
        # every diagonal present): a gather instead of scipy's diagonal() per factorization
        self.diag_pos = (structure.indptr[1:] - 1).astype(np.int64)
        n = structure.n
        self._template = sp.csc_matrix((np.zeros(structure.nnz), self.indices32,
                                        self.indptr32), shape=(n, n))
        self._idle = []
        self._lock = threading.Lock()
        # {dense: tables}: None or absent: not built yet; False: none
        self._kernel_tables = {}

    def kernel_tables(self, dense: bool = False):
        """The compiled kernels' analysis of the structure for their QDLDL
        (:class:`caspar_backend.compiled.ldl.LDLTables`: the same factors bit for bit,
        without the package's per-call SciPy matrix) or, ``dense``, for their dense
        Bunch-Kaufman of a small K; built once on first use where the general path may
        use the kernels (:func:`caspar_backend.compiled.dispatch.general_path_kernels`);
        None otherwise, and the qdldl package (the NumPy Bunch-Kaufman) factorizes."""
        tables = self._kernel_tables.get(dense)
        if tables is None:
            with self._lock:
                tables = self._kernel_tables.get(dense)
                if tables is None:
                    # (None again: not yet allowed in this process, asked again later)
                    tables = _build_kernel_tables(self.structure, dense)
                    self._kernel_tables[dense] = tables
        return tables or None

    def matrix(self):
        """A CSC matrix of the structure with values of its own (zeros) over the shared
        index arrays: a shallow copy of a template (SciPy's constructor validates the
        index arrays each time, 20 us)."""
        a = copy.copy(self._template)
        a.data = np.zeros(self.structure.nnz)
        return a

    def take(self):
        """An idle ``qdldl.Solver`` of the structure, now the caller's; None when none."""
        with self._lock:
            return self._idle.pop() if self._idle else None

    def give(self, solver) -> None:
        """Take back ``solver`` (taken from here or made for this structure)."""
        with self._lock:
            if len(self._idle) < self.MAX_IDLE:
                self._idle.append(solver)


def _build_kernel_tables(structure, dense: bool):
    """:class:`~caspar_backend.compiled.ldl.LDLTables` of ``structure``; None while the
    general path may not use the kernels (:func:`caspar_backend.compiled.dispatch.
    general_path_kernels`); False where they cannot serve it (numba or qdldl missing, a
    pattern they reject)."""
    from ..compiled import available

    if not available():
        return False
    from ..compiled.dispatch import general_path_kernels

    if not general_path_kernels():
        return None
    from ..compiled.ldl import LDLTables

    try:
        return LDLTables(structure, dense)
    except (ImportError, ValueError):
        return False


class QDLDLSolver(LinearSolver):
    """Final."""

    name = "qdldl"

    def __init__(self, small_pivoting: bool = True):
        """``small_pivoting=False``: QDLDL for a small K too (the batched QDLDL's tests
        compare with it), instead of the dense Bunch-Kaufman factorization (module
        doc)."""
        #: whether a small K gets the dense Bunch-Kaufman (read at :meth:`analyse`)
        self.small_pivoting = bool(small_pivoting)
        self.structure = None
        self._symbolic = None
        self._solver = None
        self._matrix = None
        self._dense = None          # (ldu, ipiv) once switched to Bunch-Kaufman
        self._dense_buf = None      # its N x N work matrix (lower triangle filled)
        self._lu = None             # SuperLU of K for the solves of one factorization
        self._sparse_pivoting = None  # the PARDISO solver of the pivoting mode, large N
        self._kernel = None         # compiled.ldl.KernelLDL, where the kernels factorize
        self._small = False         # a small K: dense Bunch-Kaufman (small_pivoting)
        self.pivots = False
        self.pivoting = False
        self._switched_dense = False  # pivoting: the dense mode enable_pivoting chose

    def enable_pivoting(self) -> bool:
        """The pivoting mode (module doc): LAPACK's dense Bunch-Kaufman up to
        DENSE_PIVOTING_MAX_N rows, MKL's PARDISO above where MKL is installed."""
        if self.pivoting or self.structure is None:
            return False
        if self.structure.n > DENSE_PIVOTING_MAX_N:
            from .pardiso_mkl import PardisoMKLSolver, pardiso_available

            if not pardiso_available():
                return False
            self._sparse_pivoting = PardisoMKLSolver()
            self._sparse_pivoting.analyse(self.structure)
        else:
            self._switched_dense = self.structure.n >= DENSE_PIVOTING_LEAVE_MIN_N
        self.pivoting = True
        return True

    def leave_pivoting(self) -> bool:
        """Leave the dense mode :meth:`enable_pivoting` chose for N >=
        DENSE_PIVOTING_LEAVE_MIN_N (O(N^3) against QDLDL's sparse elimination: COPS
        glider, N = 899, 13 ms against ~0.2 ms); PARDISO's sparse mode stays (module
        doc), and so do a smaller dense one and the dense factorization of a K that is
        dense from the start (:func:`dense_kkt`)."""
        if not self._switched_dense:
            return False
        self._switched_dense = False
        self.pivoting = False
        self._dense = None
        return True

    def _full_matrix(self):
        """The matrix with both triangles (CSC) from the stored upper triangle."""
        a = self._matrix
        return (a + a.T - sp.diags(self._diag)).tocsc()

    def factorize_accurate(self, diag_shift) -> bool:
        from scipy.sparse.linalg import splu

        if self.structure is None or self.structure.n > ACCURATE_LU_MAX_N:
            return False
        try:
            # partial pivoting (threshold 1): accuracy is the point
            self._lu = splu(self._full_matrix() - sp.diags(diag_shift),
                            permc_spec="COLAMD")
        except RuntimeError:        # "Factor is exactly singular"
            self._lu = None
        return self._lu is not None

    def _factorize_dense(self) -> Factorization:
        from scipy.linalg import lapack

        # the lower triangle LAPACK reads: the stored upper triangle's entries mirrored
        if self._dense_buf is None:
            n = self.structure.n
            self._dense_buf = np.zeros((n, n))
            m = self._matrix
            self._dense_rows = np.repeat(np.arange(n), np.diff(m.indptr))  # columns of U
            self._dense_cols = m.indices                                    # rows of U
            # LAPACK's optimal workspace: the blocked algorithm (SciPy's default lwork
            # runs the unblocked one, 4-6x slower at n = 700-1,400)
            self._dense_lwork = max(1, int(lapack.dsytrf_lwork(n, lower=1)[0]))
        k = self._dense_buf
        k[self._dense_rows, self._dense_cols] = self._matrix.data
        with single_threaded_blas():
            ldu, ipiv, info = lapack.dsytrf(k, lower=1, lwork=self._dense_lwork)
        n = k.shape[0]
        n_pos, n_neg = _bunch_kaufman_inertia(ldu, ipiv)
        n_zero = n - n_pos - n_neg
        self._dense = (ldu, ipiv) if n_zero == 0 and info >= 0 else None
        return Factorization(self._dense is not None, n_pos, n_neg, n_zero)

    def symbolic(self, structure: SparseStructure) -> QDLDLSymbolic:
        return QDLDLSymbolic(structure)

    def analyse(self, structure: SparseStructure, symbolic=None) -> None:
        self.release()
        sym = QDLDLSymbolic(structure) if symbolic is None else symbolic
        self._symbolic = sym
        self.structure = structure
        # this solver's matrix: its own values over the shared index arrays
        self._matrix = sym.matrix()
        self._solver = None   # the qdldl object needs values: taken at first factorize
        self._diag = np.zeros(structure.n)
        self._diag_pos = sym.diag_pos
        n = structure.n
        self._matvec = UpperTriangleMatvec(n, sym.indptr32, sym.indices32)
        # a small K: Bunch-Kaufman from the first factorization, no static term (module doc)
        self._small = self.pivots = self.small_pivoting and small_k(n)
        self.pivoting = self._small or dense_kkt(n, structure.nnz)
        self._switched_dense = False
        self._dense_buf = None
        self._sparse_pivoting = None
        self._kernel = None
        tables = None if self.pivoting and not self._small else sym.kernel_tables(self._small)
        if tables is not None:
            from ..compiled.ldl import KernelLDL

            self._kernel = KernelLDL(tables)
        elif self._small:
            from .bunch_kaufman import HostBunchKaufman

            self._kernel = HostBunchKaufman(structure)

    def release(self) -> None:
        if self._sparse_pivoting is not None:
            self._sparse_pivoting.release()
        solver, self._solver = self._solver, None
        if solver is not None and self._symbolic is not None:
            self._symbolic.give(solver)

    def _first_factorization(self, qdldl):
        """``(qdldl object, D)`` of the current matrix for the first factorization of
        this solver (or the first after a failed one): a borrowed idle object updated,
        else a new one (``qdldl``: the module).  Raises as the constructor does on a
        zero pivot (module doc)."""
        solver = self._symbolic.take()
        if solver is None:
            solver = qdldl.Solver(self._matrix, upper=True)
            return solver, solver.factors()[1]
        solver.update(self._matrix, upper=True)
        d = solver.factors()[1]
        if not np.all(d != 0.0):      # QDLDL stopped at a zero pivot
            self._symbolic.give(solver)
            raise ZeroDivisionError("zero pivot in the first factorization")
        return solver, d

    def factorize(self, values) -> Factorization:
        import qdldl

        # data is replaced in place; the pattern (and qdldl's analysis) stays
        self._matrix.data[:] = values
        # for matvec, once per factorization (a new array: _full_matrix may keep it)
        self._diag = self._matrix.data[self._diag_pos]
        self._lu = None
        if self._sparse_pivoting is not None:
            return self._sparse_pivoting.factorize(values)
        if self.pivoting and not self._small:
            return self._factorize_dense()
        if self._kernel is not None:
            n_pos, n_neg, n_zero = self._kernel.factorize(self._matrix.data)
            return Factorization(n_zero == 0, n_pos, n_neg, n_zero)
        try:
            if self._solver is None:
                self._solver, d = self._first_factorization(qdldl)
            else:
                self._solver.update(self._matrix, upper=True)
                d = self._solver.factors()[1]
        except Exception:           # qdldl raises on some zero pivots
            self._solver = None
            return Factorization(False, 0, 0, self.structure.n)
        finite = np.isfinite(d)
        n_pos = int(np.count_nonzero(d[finite] > 0))
        n_neg = int(np.count_nonzero(d[finite] < 0))
        n_zero = self.structure.n - n_pos - n_neg
        return Factorization(n_zero == 0, n_pos, n_neg, n_zero)

    def solve(self, rhs, out=None):
        b = np.ascontiguousarray(rhs, dtype=np.float64)
        if self._lu is not None:
            x = self._lu.solve(b)
        elif self._sparse_pivoting is not None:
            x = self._sparse_pivoting.solve(b)
        elif self.pivoting and not self._small:
            from scipy.linalg import lapack

            ldu, ipiv = self._dense
            x = lapack.dsytrs(ldu, ipiv, b[:, None], lower=1)[0][:, 0]
        elif self._kernel is not None:
            return self._kernel.solve(b, out)     # (into ``out`` itself: no new array)
        else:
            x = self._solver.solve(b)
        if out is None:
            return x
        out[:] = x
        return out

    def matvec(self, x, out=None):
        return self._matvec(self._matrix.data, self._diag, x, out)
