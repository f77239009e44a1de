"""Sparse LDL^T with Bunch-Kaufman pivoting and inertia: Intel MKL's PARDISO.

PARDISO (``mtype = -2``, real symmetric indefinite) factors ``P K P^T = L D L^T`` with a
METIS nested-dissection order P, supernodes, and within them 1x1 and 2x2 Bunch-Kaufman
pivots; a pivot smaller than ``10^-iparm[9] ||K||`` is perturbed to that size and
counted (``iparm[13]``). Symmetric weighted matching and scaling, computed from the
values in the analysis phase, move large entries next to the diagonal first so that most
2x2 pivots fall within a supernode. These are IPOPT's settings for ``linear_solver =
pardisomkl`` (IpPardisoMKLSolverInterface: METIS, one refinement step inside PARDISO,
pivots perturbed below ``1e-12 ||K||``, scaling and matching on) except the pivoting,
MKL's own default for this matrix type: ``iparm[20] = 1`` (Bunch-Kaufman; with IPOPT's 3
the solution of a saddle-point matrix with 700 zero diagonal entries was off by 7.9 in
the residual, with MKL's 1 by 4e-12). The perturbation stays IPOPT's ``1e-12``: at MKL's
``1e-8`` the pivots ``-delta_c`` of a rank-deficient Jacobian (``delta_c = 1e-8
mu^(1/4)``) are themselves perturbed. The inertia is PARDISO's count of positive and
negative eigenvalues of D (``iparm[21]``, ``iparm[22]``): exact up to the perturbed
pivots, which it counts with their perturbed sign.

Where a factorization perturbed pivots, the analysis (matching and scaling depend on the
values) is redone once on the current values and the matrix factorized again (IPOPT's
rule).  Pivots perturbed again then count as zero pivots: K is reported singular
(``n_zero`` the number perturbed), and the inertia correction regularizes it as it does
for an unpivoted factorization's zero pivot -- IPOPT's option
``pardisomkl_repeated_perturbation_means_singular = yes``.  With IPOPT's default (take
the perturbed factorization) a problem with a duplicated equality constraint ran
3,000 iterations here against IPOPT's (MUMPS) 5; as singular, the same 5 iterations
and IPOPT's solution (option ``pardisomkl_repeated_perturbation_means_singular``, caspar's
default ``yes``).  The price: a K whose zero diagonal entries PARDISO perturbs
although K is nonsingular (a saddle point whose H has zeros beside A's columns) is
regularized as qdldl's would be.  A zero pivot PARDISO reports as an error (-4) or a
structurally singular analysis (-7) is a singular K (``n_zero = N``).

IPOPT's options of this solver set the rest (solver/option_table.py):
``pardisomkl_order`` (iparm[1]), ``pardisomkl_matching_strategy`` (iparm[12]; caspar's
default ``complete``, IPOPT's ``complete+2x2``), ``pardisomkl_max_iterative_refinement_steps``
(iparm[7]) and ``pardisomkl_msglvl``.

The library: ``libmkl_rt`` from the ``mkl`` wheel (``pip install 'caspar-backend[mkl]'``)
or the system's (:func:`mkl_runtime`), called through ctypes with 32-bit integers (MKL's
LP64 interface, ``mkl_rt``'s default).  Each call runs on the calling thread alone
(``MKL_Set_Num_Threads_Local(1)``, restored after): results independent of the host's
core count, and no OpenMP team competing with a batch's or a service's threads.

Array formats: PARDISO takes the **upper** triangle in CSR, 0-based (``iparm[34] = 1``),
every diagonal entry stored; the solver's input is the upper triangle in CSC
(linsolve/base.py), i.e. the lower triangle in CSR, so :meth:`PardisoMKLSolver.analyse`
computes once the permutation of the stored values into PARDISO's order.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from pathlib import Path

import numpy as np

from .base import Factorization, LinearSolver, SparseStructure
from .upper_matvec import UpperTriangleMatvec

#: PARDISO's matrix type: real symmetric indefinite
MTYPE_REAL_SYMMETRIC_INDEFINITE = -2
#: PARDISO's errors that mean a singular matrix (zero pivot; structurally singular)
SINGULAR_ERRORS = (-4, -7)

_lock = threading.Lock()
_runtime: list = []          # [ctypes library or None] once looked up


def _candidate_paths():
    """``libmkl_rt`` of the ``mkl`` wheel (its recorded files), then the loader's search
    (system MKL, conda's)."""
    try:
        from importlib.metadata import PackageNotFoundError, files
        try:
            for f in files("mkl") or ():
                name = Path(str(f)).name
                if name.startswith(("libmkl_rt.so", "mkl_rt.", "libmkl_rt.")):
                    yield str(f.locate())
        except PackageNotFoundError:
            pass
    except ImportError:         # pragma: no cover -- Python < 3.8
        pass
    found = ctypes.util.find_library("mkl_rt")
    if found:
        yield found


def _declare(lib) -> None:
    i32 = np.ctypeslib.ndpointer(np.int32, flags="C_CONTIGUOUS")
    f64 = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
    i64 = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
    pint = ctypes.POINTER(ctypes.c_int)
    lib.pardisoinit.restype = None
    lib.pardisoinit.argtypes = [i64, pint, i32]
    # pardiso(pt, maxfct, mnum, mtype, phase, n, a, ia, ja, perm, nrhs, iparm, msglvl,
    #         b, x, error)
    lib.pardiso.restype = None
    lib.pardiso.argtypes = [i64, pint, pint, pint, pint, pint, f64, i32, i32,
                            ctypes.c_void_p, pint, i32, pint, ctypes.c_void_p,
                            ctypes.c_void_p, pint]
    lib.MKL_Set_Num_Threads_Local.restype = ctypes.c_int
    lib.MKL_Set_Num_Threads_Local.argtypes = [ctypes.c_int]


def mkl_runtime():
    """MKL's single dynamic library (ctypes), or None where none is installed; looked up
    once per process."""
    with _lock:
        if not _runtime:
            lib = None
            for path in _candidate_paths():
                try:
                    lib = ctypes.CDLL(path)
                    _declare(lib)
                    break
                except (OSError, AttributeError):
                    lib = None
            _runtime.append(lib)
        return _runtime[0]


def pardiso_available() -> bool:
    return mkl_runtime() is not None


def _raise(err: int, phase: str):
    """PARDISO's errors other than a singular matrix (-2: not enough memory)."""
    if err == -2:
        raise MemoryError(f"PARDISO (MKL) {phase}: not enough memory")
    raise RuntimeError(f"PARDISO (MKL) {phase} failed with error {err}")


def _upper_csr(structure: SparseStructure):
    """``(ia, ja, order)``: PARDISO's upper-triangle CSR (int32) of ``structure`` and the
    positions of its entries in the CSC values (``values[order]`` is PARDISO's ``a``)."""
    n = structure.n
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(structure.indptr))
    rows = np.asarray(structure.indices, dtype=np.int64)
    order = np.lexsort((cols, rows))            # by row, then column
    ia = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=n), out=ia[1:])
    return ia, np.ascontiguousarray(cols[order], dtype=np.int32), order


class PardisoMKLSolver(LinearSolver):
    """Final.  One PARDISO handle per solver (its internal memory freed by
    :meth:`release` or when the solver is collected)."""

    name = "pardisomkl"
    #: pivots: no static regularization needed (linsolve/base.py)
    pivots = True

    #: IPOPT's option values -> iparm entries (option_table.py's pardisomkl_* rows)
    ORDERS = {"amd": 0, "one": 1, "metis": 2, "pmetis": 3}
    MATCHINGS = {"complete": 1, "complete+2x2": 2, "constraints": 3}

    def __init__(self, order: str = "metis", matching: str = "complete",
                 refinement_steps: int = 1, msglvl: int = 0,
                 perturbation_means_singular: bool = True):
        self._settings = (self.ORDERS[order], self.MATCHINGS[matching],
                          int(refinement_steps))
        self._msglvl = int(msglvl)
        self._perturbation_means_singular = bool(perturbation_means_singular)
        lib = mkl_runtime()
        if lib is None:
            from ..errors import OptionError

            raise OptionError("linear_solver='pardisomkl' needs Intel MKL: "
                              "pip install 'caspar-backend[mkl]'")
        self._lib = lib
        self.structure = None
        self._handle_live = False
        self._pt = np.zeros(64, dtype=np.int64)
        self._iparm = np.zeros(64, dtype=np.int32)
        self._err = ctypes.c_int(0)
        self._analysed = False

    # ------------------------------------------------------------ PARDISO calls
    def _call(self, phase: int, b=None, x=None, nrhs: int = 1) -> int:
        c = ctypes.c_int
        lib = self._lib
        previous = lib.MKL_Set_Num_Threads_Local(1)
        try:
            lib.pardiso(self._pt, ctypes.byref(c(1)), ctypes.byref(c(1)),
                        ctypes.byref(c(MTYPE_REAL_SYMMETRIC_INDEFINITE)),
                        ctypes.byref(c(phase)), ctypes.byref(c(self.structure.n)),
                        self._a, self._ia, self._ja, None, ctypes.byref(c(nrhs)),
                        self._iparm, ctypes.byref(c(self._msglvl)),
                        None if b is None else b.ctypes.data,
                        None if x is None else x.ctypes.data, ctypes.byref(self._err))
        finally:
            lib.MKL_Set_Num_Threads_Local(previous)
        return self._err.value

    def _init_parameters(self) -> None:
        p = self._iparm
        p[:] = 0
        self._pt[:] = 0
        self._lib.pardisoinit(self._pt, ctypes.byref(ctypes.c_int(
            MTYPE_REAL_SYMMETRIC_INDEFINITE)), p)
        order, matching, refinement = self._settings
        p[0] = 1        # the values below, not the defaults
        p[1] = order    # fill-reducing order (2: METIS nested dissection)
        p[7] = refinement   # refinement steps inside PARDISO
        p[9] = 12       # perturb pivots below 1e-12 ||K|| (module doc)
        p[10] = 1       # scaling      } from the values, in the analysis
        p[12] = matching    # weighted matching (1: complete)
        p[20] = 1       # Bunch-Kaufman 1x1 and 2x2 pivots (module doc)
        p[34] = 1       # 0-based indices

    def release(self) -> None:
        if self._handle_live:
            self._call(-1)
            self._handle_live = False
        self._analysed = False

    def __del__(self):
        try:
            self.release()
        except Exception:       # interpreter shutdown: the library may be gone
            pass

    # ------------------------------------------------------------ LinearSolver
    def analyse(self, structure: SparseStructure, symbolic=None) -> None:
        self.release()
        self.structure = structure
        self._ia, self._ja, self._order = _upper_csr(structure)
        self._a = np.zeros(structure.nnz)
        self._values = np.zeros(structure.nnz)
        self._diag = np.zeros(structure.n)
        self._diag_pos = (np.asarray(structure.indptr[1:]) - 1).astype(np.int64)
        self._matvec = UpperTriangleMatvec(structure.n,
                                           np.asarray(structure.indptr, np.int32),
                                           np.asarray(structure.indices, np.int32))
        self._init_parameters()

    def _analyse_values(self) -> int:
        """Phase 11 (ordering, matching and scaling) on the current values."""
        if self._handle_live:
            self._call(-1)
        self._init_parameters()
        err = self._call(11)
        self._handle_live = True
        self._analysed = err == 0
        return err

    def factorize(self, values) -> Factorization:
        n = self.structure.n
        np.copyto(self._values, values)
        np.take(self._values, self._order, out=self._a)
        self._diag = self._values[self._diag_pos]
        fresh = False
        if not self._analysed:
            err = self._analyse_values()
            if err != 0:
                return Factorization(False, 0, 0, n)
            fresh = True
        while True:
            err = self._call(22)
            if err in SINGULAR_ERRORS:
                return Factorization(False, 0, 0, n)
            if err != 0:
                _raise(err, "factorization")
            if self._iparm[13] == 0 or fresh:
                break
            # perturbed pivots: the analysis again on these values, once
            if self._analyse_values() != 0:
                return Factorization(False, 0, 0, n)
            fresh = True
        n_pos, n_neg = int(self._iparm[21]), int(self._iparm[22])
        n_zero = n - n_pos - n_neg
        perturbed = int(self._iparm[13])
        if perturbed and self._perturbation_means_singular:
            # perturbed again after an analysis on these very values: singular (module
            # doc)
            return Factorization(False, n_pos, n_neg, max(n_zero, perturbed))
        return Factorization(n_zero == 0, n_pos, n_neg, n_zero)

    def solve(self, rhs, out=None):
        b = np.array(rhs, dtype=np.float64, order="C")   # PARDISO may write to b
        x = np.zeros_like(b) if out is None or out.dtype != np.float64 \
            or not out.flags.c_contiguous else out
        err = self._call(33, b, x)
        if err != 0:
            _raise(err, "solve")
        if out is not None and x is not out:
            out[:] = x
            return out
        return x

    def matvec(self, x, out=None):
        return self._matvec(self._values, self._diag, x, out)
