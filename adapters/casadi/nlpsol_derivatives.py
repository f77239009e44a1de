"""IPOPT's user derivative Functions ``grad_f``, ``jac_g``, ``hess_lag``.

casadi's IPOPT interface (``IpoptInterface::init``) evaluates the problem's derivatives
with these Functions instead of the ones it generates:

* ``grad_f``:   ``(x, p) -> (f, grad_x f)``;
* ``jac_g``:    ``(x, p) -> (g, jac_x g)``, ``ng x nx``;
* ``hess_lag``: ``(x, p, lam_f, lam_g) -> triu(hess_x (lam_f f + lam_g^T g))``, upper
  triangular (IPOPT reads the nonzeros of the upper triangle).

It checks the numbers of inputs and outputs, the Jacobian's shape and that the Hessian is
upper triangular (raising when not), and uses them as given: a gradient or Jacobian
that is not the derivative moves IPOPT's solution; a Hessian that is not the exact one
(a Gauss-Newton Hessian, say) changes the iterates, and with them where the solve stops
within its tolerance.

caspar applies casadi's structural checks when the solver is built.  It iterates with
``hess_lag`` as IPOPT does (:meth:`UserDerivatives.hessian`: the Function evaluated on
the host in place of caspar's own Hessian, :class:`~caspar_backend.evaluators.
hessian_override.HessianOverride`) -- so that a Gauss-Newton solve takes IPOPT's steps.
Gradient and Jacobian come from caspar's exact derivatives: at the first numeric solve
it evaluates ``grad_f`` and ``jac_g`` at that solve's ``x0`` and ``p`` and compares them
with its own there: where

    max |D_user - D_caspar| > RTOL * max(1, max |D_caspar|)

a warning names the Function and the difference and says what caspar does.
"""

from __future__ import annotations

import warnings
from typing import final

import numpy as np
import scipy.sparse as sparse

import casadi as ca

from .nlpsol_options import NlpsolOptionError

#: relative agreement asked of a user derivative at the check point
RTOL = 1e-6

#: option -> (inputs, outputs, the output checked, what it is)
_SIGNATURES = {
    "grad_f": (2, 2, 1, "the gradient of f"),
    "jac_g": (2, 2, 1, "the Jacobian of g"),
    "hess_lag": (4, 1, 0, "the Hessian of the Lagrangian"),
}


@final
class UserDerivatives:
    """The user's derivative Functions of one solver (final): ``functions`` maps option
    name to Function for those given; ``n``, ``m``, ``q`` are the solver's numbers of
    variables, constraints and parameters; ``exact_hessian`` is False when the solver
    approximates the Hessian (IPOPT then does not use ``hess_lag``: neither is it
    compared)."""

    def __init__(self, functions: dict, n: int, m: int, q: int, exact_hessian: bool = True):
        self.functions = {k: f for k, f in functions.items() if f is not None}
        if not exact_hessian:
            self.functions.pop("hess_lag", None)
        self.n, self.m, self.q = n, m, q
        self.checked = False
        for name, fn in self.functions.items():
            self._check_structure(name, fn)

    def _check_structure(self, name: str, fn: ca.Function) -> None:
        """casadi's checks (IpoptInterface::init), plus input sizes: an input of the
        wrong size would make IPOPT read past its arrays."""
        n_in, n_out, k, _ = _SIGNATURES[name]
        if fn.n_in() != n_in or fn.n_out() != n_out:
            raise NlpsolOptionError(f"option {name!r}: expected a Function with {n_in} "
                                    f"inputs and {n_out} outputs, got {fn.n_in()} -> "
                                    f"{fn.n_out()}")
        sizes = (self.n, self.q, 1, self.m)[:n_in]
        for i, size in enumerate(sizes):
            # an empty (0x0) input is one the Function does not read: casadi accepts any
            # argument there (a Gauss-Newton hess_lag has no lam_g)
            if fn.nnz_in(i) != size and not fn.sparsity_in(i).is_empty(True):
                raise NlpsolOptionError(f"option {name!r}: input {i} ({fn.name_in(i)}) "
                                        f"has {fn.nnz_in(i)} nonzeros, expected {size}")
        sp = fn.sparsity_out(k)
        if name == "grad_f" and sp.numel() != self.n:
            raise NlpsolOptionError(f"option 'grad_f': the gradient has shape {sp.dim()}, "
                                    f"expected {self.n} entries")
        if name == "jac_g" and (sp.size1() != self.m or sp.size2() != self.n):
            raise NlpsolOptionError(f"nlp_jac_g must have {self.m} rows and {self.n} "
                                    f"columns, but has shape {sp.dim()} instead.")
        if name == "hess_lag" and (sp.size1() != self.n or sp.size2() != self.n):
            raise NlpsolOptionError(f"option 'hess_lag': the Hessian must be {self.n}x"
                                    f"{self.n}, got {sp.dim()}")
        if name == "hess_lag" and not sp.is_triu():
            raise NlpsolOptionError("option 'hess_lag': Hessian must be upper triangular")

    def hessian(self, evaluator):
        """``evaluator`` with ``hess_lag`` as its Hessian (IPOPT's use of it), or
        ``evaluator`` itself when no ``hess_lag`` is given."""
        fn = self.functions.get("hess_lag")
        if fn is None:
            return evaluator
        from caspar_backend.evaluators.hessian_override import HessianOverride

        upper_r, upper_c = fn.sparsity_out(0).get_triplet()

        def values(x, lam, obj_factor, p):
            # a Function's result has its declared pattern: its nonzeros in that order
            out = fn.call(_arguments(fn, (x, p, [obj_factor], lam)))[0]
            return np.array(ca.DM(out).nonzeros(), float)

        # casadi's triplets of the upper triangle (row <= col) are the lower triangle's
        # (col, row), in the same nonzero order
        return HessianOverride(evaluator, upper_c, upper_r, values)

    def check_once(self, evaluator, x0, p) -> None:
        """At the first call: compare ``grad_f`` and ``jac_g`` with ``evaluator``'s
        derivative at ``(x0, p)`` (the evaluator has ``p`` bound) and warn where they
        differ (``hess_lag`` is not compared: caspar iterates with it)."""
        if self.checked or not self.functions:
            return
        self.checked = True
        x0 = np.asarray(x0, float)
        lam = np.ones(self.m)
        for name, fn in self.functions.items():
            if name == "hess_lag":
                continue
            _, _, k, what = _SIGNATURES[name]
            args = _arguments(fn, (x0, p, [1.0], lam)[:fn.n_in()])
            try:
                user = _sparse(fn.call(args)[k])
            except RuntimeError as exc:
                warnings.warn(f"nlpsol option {name!r}: evaluating it at x0 failed ({exc}); "
                              "caspar solves with its own exact derivatives", stacklevel=3)
                continue
            if name == "grad_f":
                # a row or a column: its entries in x's order
                user = sparse.csr_matrix(user.toarray().reshape(1, -1, order="F"))
                own = sparse.csr_matrix(np.asarray(evaluator.grad(x0), float).reshape(1, -1))
            elif name == "jac_g":
                own = evaluator.jac(x0)
            else:
                user = user + user.T - sparse.diags(user.diagonal())
                own = evaluator.hess(x0, lam, 1.0)
            diff = float(abs(user - own).max()) if own.shape[0] * own.shape[1] else 0.0
            scale = max(1.0, float(abs(own).max()) if own.nnz else 0.0)
            if not diff <= RTOL * scale:
                warnings.warn(
                    f"nlpsol option {name!r} differs from {what} at x0 (max difference "
                    f"{diff:.3g}, relative {diff / scale:.3g}): caspar solves with its own "
                    f"exact derivatives, not with {name!r}"
                    + (" (IPOPT would iterate with it: the iterates may differ, the "
                       "solution satisfies the same optimality conditions)"
                       if name == "hess_lag" else
                       " (IPOPT would converge where the given derivative vanishes: the "
                       "solutions may differ)"), stacklevel=3)


def _arguments(fn, values) -> list:
    """The DM arguments of ``fn`` for the nonzero vectors ``values`` (an empty input:
    an empty DM, as casadi passes to an input the Function does not read)."""
    out = []
    for i, v in enumerate(values):
        sp = fn.sparsity_in(i)
        out.append(ca.DM(sp) if sp.is_empty(True) else ca.DM(sp, np.asarray(v, float)))
    return out


def _sparse(dm) -> "sparse.csr_matrix":
    """A DM as a scipy sparse matrix of its shape and nonzeros."""
    dm = ca.DM(dm)
    r, c = dm.sparsity().get_triplet()
    return sparse.csr_matrix((np.asarray(dm.nonzeros(), float), (r, c)), shape=dm.shape)
