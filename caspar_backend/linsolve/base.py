"""Abstract sparse symmetric (indefinite) linear solver with inertia.

A solver is used in three phases, so that the symbolic work is done once per structure:

1. ``analyse(structure, symbolic=None)`` with a :class:`SparseStructure`: an ``N x N``
   symmetric matrix given by its **upper triangle in CSC** (``indptr`` int64 length N+1,
   ``indices`` int64 row indices, sorted within each column, 0-based, no duplicates,
   every diagonal entry present even if its value may be zero).  ``symbolic``: what
   ``symbolic(structure)`` of a solver of the same kind returned, shared by every
   solver of that structure (the solves of one compiled problem keep it in its
   :class:`~caspar_backend.structure_cache.StructureCache`), so that a solver analyses a
   structure once for all solves; None: the solver's own analysis.  Solvers without
   shareable symbolic work return None from :meth:`LinearSolver.symbolic`.
2. ``factorize(values)``: ``values`` float64 length ``nnz`` in the order of
   ``structure.indices``.  Returns a :class:`Factorization` with the inertia
   ``(n_pos, n_neg, n_zero)`` of the matrix.  A pivot that is exactly zero or not finite
   counts toward ``n_zero`` (the matrix is treated as singular and must not be solved).
3. ``solve(rhs, out=None)``: solution of ``K x = rhs`` with the last successful
   factorization.

``release()`` ends a solver's use: what it borrowed from a shared ``symbolic`` goes back
to it, for the next solver of the structure.

Inertia is the number of positive, negative and zero eigenvalues; an LDL^T solver reads it
from the signs of D (Sylvester's law of inertia), which is exact for a diagonal D.  A
solver whose D has 2x2 blocks must count those blocks' eigenvalues.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SparseStructure:
    """Upper-triangle CSC pattern of a symmetric N x N matrix (see module doc)."""

    n: int
    indptr: np.ndarray
    indices: np.ndarray

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])


@dataclass(frozen=True)
class Factorization:
    ok: bool
    n_pos: int
    n_neg: int
    n_zero: int

    @property
    def inertia(self) -> tuple:
        return (self.n_pos, self.n_neg, self.n_zero)


class LinearSolver(ABC):
    """Abstract linear solver; implementations are final."""

    #: name of the option value selecting it
    name: str = ""
    #: True when it reports exact inertia (the interior-point method requires it)
    provides_inertia: bool = True
    #: True while its factorization replaces tiny pivots by +-epsilon without reporting
    #: them (static pivoting): a singular or nearly singular K then factorizes with a
    #: plausible inertia and only the refinement's residual shows it
    perturbs_pivots: bool = False
    #: True when every factorization pivots (1x1 and 2x2 pivots chosen by magnitude):
    #: the KKT system then adds no static regularization by default
    pivots: bool = False
    #: the factor on the static term's constraint rows (``eps_i`` of
    #: :mod:`caspar_backend.kkt.augmented`): 1 for a factorization that needs the term to
    #: survive tiny constraint pivots; smaller for one that pivots by magnitude and only
    #: perturbs a pivot that is (numerically) zero, where the rows' term has one role left
    #: -- a rank-deficient Jacobian factorized as a nonsingular K rather than through the
    #: solver's own perturbation -- and any term that refinement would have to remove
    #: biases the step instead (docs/kkt-regularization-and-refinement.md)
    row_static_factor: float = 1.0
    #: True while it factorizes with pivoting in a mode :meth:`enable_pivoting` switched
    #: to (or, with no other mode, by construction: cuDSS's Bunch-Kaufman); an unpivoted
    #: factorization's inertia is what the inertia correction may distrust
    pivoting: bool = False

    def symbolic(self, structure: SparseStructure):
        """The symbolic work on ``structure`` that solvers of this kind may share (see
        the module doc: immutable, or handing out per-solver parts to one solver at a
        time, thread-safely); None: none (the default)."""
        return None

    @abstractmethod
    def analyse(self, structure: SparseStructure, symbolic=None) -> None: ...

    def release(self) -> None:
        """Give back what this solver borrowed from its shared ``symbolic``; it is not
        used afterwards (the default: nothing borrowed)."""

    @abstractmethod
    def factorize(self, values) -> Factorization: ...

    @abstractmethod
    def solve(self, rhs, out=None): ...

    def solve_add(self, rhs, x) -> None:
        """``x += A^{-1} rhs`` in place (a refinement's correction; the default: through
        :meth:`solve`'s new array)."""
        x += self.solve(rhs)

    def enable_pivoting(self) -> bool:
        """Switch the following :meth:`factorize` calls to a pivoting factorization
        (1x1 and 2x2 pivots chosen by magnitude) or another one that keeps every
        eigenvalue (a dense eigendecomposition), for matrices where a fixed elimination
        order loses pivots to cancellation or static pivoting replaces them.  Returns
        False when the solver has no such mode, or it is already on (the default: no
        such mode)."""
        return False

    def leave_pivoting(self) -> bool:
        """Back from a mode :meth:`enable_pivoting` switched to, to the solver's own
        factorization, where the mode costs far more per factorization than that one
        (the KKT system tries the cheap one again each iteration); True when it left.
        The default: a mode, once on, stays."""
        return False

    def factorize_accurate(self, diag_shift) -> bool:
        """Factorize ``K_f - diag(diag_shift)`` (``K_f`` the matrix of the last
        :meth:`factorize`, ``diag_shift`` a float64 vector of length N in the solver's
        array module) with a pivoting factorization chosen for accuracy, not inertia, and
        use it for the :meth:`solve` calls until the next :meth:`factorize`.  False when
        the solver has none or that matrix is singular (the default: none)."""
        return False

    @abstractmethod
    def matvec(self, x, out=None):
        """``K x`` with the values of the last :meth:`factorize` (the full symmetric
        matrix, both triangles); used for iterative refinement."""
