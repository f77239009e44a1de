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
GPU implementation only swaps arrays and the linear solver.
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class KKTSystem(ABC):
    """Abstract; implementations are final."""

    nw: int
    m: int
    delta_w: float = 0.0
    delta_c: float = 0.0

    @abstractmethod
    def build(self) -> None:
        """Assemble the current values (hess_values, jac_values, sigma, deltas)."""

    @abstractmethod
    def factorize(self):
        """Factorize the assembled matrix; returns ``(factorization, inertia_ok)``."""

    @abstractmethod
    def solve(self, rhs_w, rhs_c):
        """Return ``(dw, dy)`` solving the system for the right-hand side ``(rhs_w, rhs_c)``
        with the last factorization (new arrays owned by the caller)."""
