"""Abstract KKT system of the primal-dual interior-point method.

The interior-point method works on the slack-extended problem (see
:mod:`caspar_backend.solver.nlp`) with primal vector ``w`` (length ``nw``: variables then
slacks) and equality constraints ``h(w) = 0`` (length ``m``).  Each iteration solves the
primal-dual Newton system, reduced by eliminating the bound multipliers,

    [ W + Sigma + delta_w I      A^T      ] [ dw ]     [ r_w ]
    [ A                       -delta_c I  ] [ dy ]  =  [ r_c ]

with ``W`` the Lagrangian Hessian in w-space (lower-triangle COO, duplicates summed),
``A = dh/dw`` (COO, no duplicates), ``Sigma`` the diagonal barrier term.  The system must
have inertia ``(nw, m, 0)`` for the step to be a descent direction of the barrier
problem; the method adds ``delta_w``/``delta_c`` until it has.

A KKT system owns

* the assembly maps from the input COO structures to the linear solver's matrix, computed
  once at construction;
* preallocated value buffers the method writes into (:attr:`hess_values`,
  :attr:`jac_values`, :attr:`sigma`) and the regularization ``delta_w``, ``delta_c``;
* ``build()`` (values into the solver's matrix, in place), ``factorize()`` (returns the
  linear solver's :class:`~caspar_backend.linsolve.Factorization` and whether its inertia
  is the required one), ``solve(rhs_w, rhs_c)`` with iterative refinement.

Implementations are written against the array module ``xp`` of the evaluator so that a
GPU implementation only swaps arrays and the linear solver:

* :class:`~caspar_backend.kkt.augmented.AugmentedKKT` factorizes the matrix above
  (symmetric indefinite LDL^T, inertia from the factorization);
* :class:`~caspar_backend.kkt.condensed.CondensedKKT` eliminates the slacks and
  multipliers of a problem whose every constraint row has a slack and factorizes a
  positive definite matrix of the size of x (positive pivots are the inertia test).
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class KKTSystem(ABC):
    """Abstract; implementations are final."""

    #: value of the ``kkt_system`` option selecting it
    name: str = ""
    nw: int
    m: int
    #: the :class:`~caspar_backend.linsolve.LinearSolver` it factorizes with
    solver: object
    delta_w: float = 0.0
    delta_c: float = 0.0
    #: columns of a low-rank Hessian block (L-BFGS); 0 for systems without one
    r: int = 0
    #: static pivot regularization of the factorized matrix (0: none)
    static_regularization: float = 0.0
    #: relative residual of the last :meth:`solve` after refinement
    last_residual_ratio: float = 0.0
    #: the last refinement step's contraction ||r_k|| / ||r_{k-1}|| (0: not measured)
    last_contraction: float = 0.0
    #: True when a solve that iterative refinement cannot make accurate means that the
    #: inertia test was passed wrongly (rounding hid a negative eigenvalue), so that the
    #: inertia correction must go on raising delta_w; False when it means a singular K
    inaccurate_solve_means_wrong_inertia: bool = False
    #: True when every factorization should carry the constraint regularization
    #: delta_c > 0 (IPOPT adds it only once the Jacobian was found degenerate)
    regularize_constraints_always: bool = False
    #: False when the caller does not test the inertia (the inertia-free curvature test
    #: accepts a factorization instead): :meth:`factorize` then reports only success
    check_inertia: bool = True

    def release(self) -> None:
        """End this system's use: its linear solver gives back what it borrowed from the
        shared symbolic analysis (:meth:`~caspar_backend.linsolve.LinearSolver.release`)."""
        self.solver.release()

    @abstractmethod
    def build(self) -> None:
        """Assemble the current values (hess_values, jac_values, sigma, deltas)."""

    @abstractmethod
    def expected_inertia(self) -> tuple:
        """Inertia ``(n_pos, n_neg, n_zero)`` of the factorized matrix when the Newton
        matrix has the required inertia ``(nw, m, 0)``."""

    def constraint_block_negative(self) -> bool:
        """Whether every constraint row of the factorized matrix has a negative diagonal
        (its inertia then has at least m negative eigenvalues, solver/inertia.py); False
        where the system does not say (the default)."""
        return False

    @abstractmethod
    def factorize(self):
        """Factorize the assembled matrix; returns ``(factorization, inertia_ok)``."""

    @abstractmethod
    def solve(self, rhs_w, rhs_c):
        """Return ``(dw, dy)`` solving the system for the right-hand side ``(rhs_w, rhs_c)``
        with the last factorization (views of a new array, owned by the caller)."""

    def solve_deferred(self, rhs_w, rhs_c):
        """:meth:`solve` whose refinement's first test is left unread: ``(dw, dy,
        first)`` (see :meth:`.AugmentedKKT.solve_deferred`); here the whole solve, and
        ``first`` None (nothing left to read)."""
        return (*self.solve(rhs_w, rhs_c), None)

    def increase_quality(self) -> bool:
        """Make the following factorizations more accurate after a failed refinement
        (IPOPT's ``IncreaseQuality``); False when there is nothing to increase (the
        default)."""
        return False

    def decrease_static_regularization(self) -> float | None:
        """Lower the static regularization after a failed refinement and return its
        previous value (to restore when that does not help); ``None`` when there is
        nothing to lower (the default)."""
        return None

    def factorize_accurate(self) -> bool:
        """Solve with an accurate pivoting factorization of K itself (no static term)
        until the next :meth:`factorize`, after refinement against the current one
        failed; False when there is none (the default)."""
        return False

    def enable_pivoting(self) -> bool:
        """Factorize with pivoting from now on; False when not available (the
        default)."""
        return False

    def leave_pivoting(self) -> bool:
        """Back to the factorization before :meth:`enable_pivoting`, where the linear
        solver leaves its pivoting mode (its ``leave_pivoting``); False otherwise (the
        default)."""
        return False
