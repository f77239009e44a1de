"""An evaluator whose Lagrangian Hessian is given by its caller (IPOPT's ``hess_lag``).

IPOPT iterates with the Hessian of the Lagrangian its caller supplies, whether or not it
is the exact one: a Gauss-Newton Hessian ``J_r^T J_r`` of a least-squares objective
(casadi's sysid example) changes the iterates, and with them where a solve stops within
its tolerance.  :class:`HessianOverride` wraps a compiled problem's evaluator and
replaces its Hessian by such a function, so that caspar takes IPOPT's steps; values,
gradients, constraints and the Jacobian stay the wrapped evaluator's.

``rows``, ``cols``: int64 (nnz,), the given Hessian's pattern as the evaluator interface
has it (lower triangle, row >= col, no duplicates); ``values(x, lam, obj_factor, p)``:
host float64 arrays in, the nnz values of ``obj_factor * H_f + sum_i lam_i H_gi`` in
that order out (a host array).  On a GPU evaluator the arguments are copied to the host
and the values back: a given Hessian is a host function.
"""

from __future__ import annotations

import numpy as np

from ..arrays.xp import host
from .base import Evaluator


class HessianOverride(Evaluator):
    """Final.  See the module docstring."""

    def __init__(self, base: Evaluator, rows, cols, values):
        self.base = base
        self.xp, self.device = base.xp, base.device
        self.n, self.m, self.n_params = base.n, base.m, base.n_params
        self.jac_rows, self.jac_cols = base.jac_rows, base.jac_cols
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        if rows.size != cols.size or (rows.size and (np.any(rows < cols) or rows.max() >= self.n
                                                     or cols.min() < 0)):
            raise ValueError("a given Hessian's pattern must be lower-triangular indices "
                             f"inside {self.n} x {self.n}")
        self.hess_rows, self.hess_cols = self.xp.asarray(rows), self.xp.asarray(cols)
        self._values = values
        # the KKT structures of the wrapped problem's own Hessian do not apply
        self.structure_cache = None

    def __getattr__(self, name):
        # what the solver may ask of an evaluator beyond the interface (describe_nonfinite,
        # build_seconds, ...) is the wrapped one's
        # not 'problem': an evaluator made from it would have the problem's own Hessian
        if name in ("base", "problem"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def set_params(self, p) -> None:
        self.base.set_params(p)

    def parameters(self) -> np.ndarray:
        return self.base.parameters()

    def obj(self, x, p=None) -> float:
        return self.base.obj(x, p=p)

    def grad(self, x, out=None, p=None):
        return self.base.grad(x, out, p=p)

    def cons(self, x, out=None, p=None):
        return self.base.cons(x, out, p=p)

    def jac_values(self, x, out=None, p=None):
        return self.base.jac_values(x, out, p=p)

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        if p is not None:
            self.set_params(p)
        v = np.asarray(self._values(np.asarray(host(x), float), np.asarray(host(lam), float),
                                    float(obj_factor), self.base.parameters()), float)
        if v.shape != (len(self.hess_rows),):
            raise ValueError(f"a given Hessian returned {v.shape} values, expected "
                             f"{len(self.hess_rows)}")
        if out is None:
            return self.xp.asarray(v)
        out[...] = self.xp.asarray(v)
        return out
