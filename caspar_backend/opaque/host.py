"""The interface of a function evaluated on the host by someone else (a front end).

An *opaque* function ``F : R^{n_in} -> R^{n_out}`` is one caspar cannot read as an
expression (a CasADi interpolant, integrator, ``Callback`` or external function): the
front end that owns it evaluates it, N instances per call, and supplies its first and
second derivatives.  Arguments and results are flat vectors of nonzeros (all inputs
concatenated, each column-major over its sparsity; the same for the outputs).

Only the inputs in ``active`` (positions ``0 <= a < n_in``, int64, increasing) are
differentiated: the others are constant in every call of the model, so their
derivatives never enter the chain rule.  With ``k = len(active)``:

* :meth:`values`: ``A`` float64 (n_in, N), column i the arguments of instance i ->
  float64 (n_out, N);
* :meth:`jacobian`: ``A`` -> float64 (N, nnz_jac), row i the values of
  ``dF/da[active]`` of instance i in the local COO ``(jac_rows, jac_cols)`` (int64,
  0-based, rows in ``0..n_out-1``, columns in ``0..k-1``, no duplicates);
* :meth:`hessian`: ``A`` and weights ``W`` float64 (n_out, N) -> float64 (N, nnz_hess),
  row i the values of ``d^2 (W[:, i]^T F(a)) / da[active]^2`` of instance i in the
  local lower-triangle COO ``(hess_rows, hess_cols)`` (row >= col, in ``0..k-1``).

*Directional* derivatives, for calls whose arguments depend on fewer quantities than
there are active inputs (the composition's seeds, :mod:`~caspar_backend.opaque.seeds`:
a parameter vector repeated into every instance's arguments): with ``K`` seeds per
instance, ``V`` float64 (N, k, K),

* :meth:`directional`: ``A``, ``V`` -> float64 (N, n_out, K), ``D_i V_i`` with
  ``D_i = dF/da[active]`` of instance i;
* :meth:`directional_hessian`: ``A``, ``V``, ``W`` -> float64 (N, K, K),
  ``V_i^T (d^2 (W[:, i]^T F) / da[active]^2) V_i``;
* :meth:`vjp`: ``A``, ``W`` -> float64 (N, k), ``D_i^T W[:, i]``.

The defaults compute them from :meth:`jacobian` and :meth:`hessian`; a front end
whose function has forward and reverse modes overrides them (with :meth:`prepare_directions`)
so that the cost grows with ``K``, not with ``k``.

A numerical failure inside the function (an integrator that does not converge) gives
NaN values, which the solver treats as an evaluation error (it cuts the step back, as
IPOPT does); a function without the derivative asked for raises
:class:`~caspar_backend.errors.EvaluationError` naming it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class HostFunction(ABC):
    """Abstract; a front end's implementation is final."""

    #: the function's name, for the log and for messages
    name: str
    #: what kind of function it is (e.g. casadi's class name ``CvodesInterface``)
    kind: str
    n_in: int
    n_out: int
    #: why the last evaluation that gave NaN failed (a front end's message), for the
    #: solver's Invalid_Number_Detected message; None: none failed
    last_error: str | None = None
    #: set by :meth:`prepare`
    active: np.ndarray
    jac_rows: np.ndarray
    jac_cols: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray

    @abstractmethod
    def prepare(self, active: np.ndarray) -> None:
        """Build the derivative functions with respect to the inputs ``active`` and
        set the local sparsity attributes above (called once, before any evaluation;
        every instance of the model shares this ``active``)."""

    @abstractmethod
    def values(self, A: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def jacobian(self, A: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def hessian(self, A: np.ndarray, W: np.ndarray) -> np.ndarray: ...

    def prepare_directions(self, n_dir: int) -> None:
        """Prepare the directional methods for ``n_dir`` seeds per instance (called after
        :meth:`prepare`; the evaluator then asks no :meth:`jacobian` or :meth:`hessian`
        of this function).  Default: nothing to prepare."""

    def _dense_jacobian(self, A) -> np.ndarray:
        """``D`` float64 (N, n_out, k) from :meth:`jacobian`."""
        vals = np.asarray(self.jacobian(A), dtype=float)
        D = np.zeros((vals.shape[0], self.n_out, len(self.active)))
        D[:, self.jac_rows, self.jac_cols] = vals
        return D

    def directional(self, A, V) -> np.ndarray:
        return self._dense_jacobian(A) @ V

    def directional_hessian(self, A, V, W) -> np.ndarray:
        vals = np.asarray(self.hessian(A, W), dtype=float)
        k = len(self.active)
        H = np.zeros((vals.shape[0], k, k))
        H[:, self.hess_cols, self.hess_rows] = vals
        H[:, self.hess_rows, self.hess_cols] = vals
        return np.swapaxes(V, 1, 2) @ H @ V

    def vjp(self, A, W) -> np.ndarray:
        return np.einsum("nok,on->nk", self._dense_jacobian(A), np.asarray(W, dtype=float))

    def describe(self) -> str:
        """``name (kind)`` for messages."""
        return f"{self.name!r} ({self.kind})"
