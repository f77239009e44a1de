"""The evaluator interface the interior-point solver talks to.

An evaluator computes, for the NLP

    min f(x; p)  s.t.  lbg <= g(x; p) <= ubg,  lbx <= x <= ubx,

with ``x`` of length ``n``, ``g`` of length ``m`` and ``p`` of length ``n_params``:

* ``obj(x) -> float``                           f(x; p)
* ``grad(x, out)``                              out[:] = grad f(x; p), shape (n,)
* ``cons(x, out)``                              out[:] = g(x; p), shape (m,)
* ``jac_values(x, out)``                        out[:] = values of J = dg/dx in the fixed
  COO structure ``(jac_rows, jac_cols)``, int64 arrays of length ``nnz_jac``, 0-based,
  **no duplicate** (row, col) pairs.
* ``hess_values(x, lam, obj_factor, out)``      out[:] = values of
  ``obj_factor * grad^2 f + sum_i lam[i] grad^2 g_i`` in the fixed COO structure
  ``(hess_rows, hess_cols)``: **lower triangle** (row >= col), 0-based, int64, length
  ``nnz_hess``; **duplicates allowed and meant to be summed** (several instances of a
  pattern group may write the same entry).

``x``, ``lam`` and ``out`` are arrays of the evaluator's array module ``xp``
(numpy or cupy) and float64; ``out`` is preallocated by the caller and
written in place, so a solver loop allocates nothing.  Parameters are bound
with :meth:`set_params` before evaluation; they are not an argument of every
call because they do not change inside a solve.

Optional: ``describe_nonfinite(x) -> str`` names the objective or constraint (in
readable form) whose value or derivatives are NaN/Inf at ``x``; the solver calls it
for its Invalid_Number_Detected message when an evaluator has it.

Convenience methods (``jac``, ``hess`` returning scipy.sparse, ``cons`` returning a
new array) are defined once here on top of the abstract ones.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Evaluator(ABC):
    """Abstract evaluator; implementations are final."""

    #: array module of inputs/outputs (numpy or cupy)
    xp = np
    #: "cpu" or "cuda"
    device = "cpu"
    #: seconds :meth:`Problem.evaluator <caspar_backend.problem.Problem.evaluator>` took
    #: to build this evaluator (code generation, compilation, tables); 0 when built
    #: elsewhere
    build_seconds = 0.0

    #: the structural work of solves of this compiled problem
    #: (:class:`~caspar_backend.structure_cache.StructureCache`), shared by the
    #: evaluators :meth:`bound` makes; None: every solve builds its own
    structure_cache = None

    n: int
    m: int
    n_params: int
    jac_rows: np.ndarray
    jac_cols: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray

    @property
    def nnz_jac(self) -> int:
        return len(self.jac_rows)

    @property
    def nnz_hess(self) -> int:
        return len(self.hess_rows)

    @abstractmethod
    def set_params(self, p) -> None:
        """Bind parameter values (length ``n_params``) for later evaluations."""

    def parameters(self) -> np.ndarray:
        """The bound parameter values, a new host float64 vector of length n_params."""
        return np.array(_host(self.p), dtype=float)[: self.n_params]

    def bound(self, p) -> "Evaluator":
        """A new evaluator of the same compiled problem for parameters ``p``, sharing
        every read-only part (generated code, tables, structures) and owning its
        mutable evaluation state (parameter vector, work buffers); what makes
        concurrent solves of one problem safe (each solve evaluates through its own).
        Evaluators that cannot do this raise NotImplementedError."""
        raise NotImplementedError(f"{type(self).__name__} has no bound(p)")

    # Every evaluation method takes an optional ``p``: when given, it is bound
    # with set_params first (convenient for tests; solvers bind once).
    @abstractmethod
    def obj(self, x, p=None) -> float: ...

    @abstractmethod
    def grad(self, x, out=None, p=None): ...

    @abstractmethod
    def cons(self, x, out=None, p=None): ...

    @abstractmethod
    def jac_values(self, x, out=None, p=None): ...

    @abstractmethod
    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None): ...

    # ---------------------------------------------------------- conveniences
    def jac(self, x, p=None):
        """J(x) as a ``scipy.sparse.csr_matrix`` of shape (m, n)."""
        import scipy.sparse as sp

        v = _host(self.jac_values(x, p=p))
        return sp.csr_matrix((v, (_host(self.jac_rows), _host(self.jac_cols))),
                             shape=(self.m, self.n))

    def hess(self, x, lam, obj_factor=1.0, p=None):
        """The Lagrangian Hessian as a symmetric ``scipy.sparse.csr_matrix`` (n, n),
        both triangles, duplicates summed."""
        import scipy.sparse as sp

        v = _host(self.hess_values(x, lam, obj_factor, p=p))
        r, c = _host(self.hess_rows), _host(self.hess_cols)
        low = sp.csr_matrix((v, (r, c)), shape=(self.n, self.n))
        diag = sp.diags(low.diagonal())
        return (low + low.T - diag).tocsr()


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)
