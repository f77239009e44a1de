"""A test-only :class:`~caspar_backend.evaluators.base.Evaluator` over CasADi Functions.

Until the CasADi adapter (``caspar_backend.from_casadi``) lands, the solver tests build
evaluators here: f, grad f, g, the sparse Jacobian (fixed CCS structure of
``jacobian(g, x)``) and the lower triangle of the Lagrangian Hessian
``sigma grad^2 f + sum lam_i grad^2 g_i`` (fixed structure of ``tril(hessian(L, x))``), all
compiled once as CasADi Functions.  Values come out as dense vectors of nonzeros in the
order of the COO triplets (CasADi's column-major nonzero order).
"""

from __future__ import annotations

import casadi as cs
import numpy as np

from caspar_backend.evaluators.base import Evaluator


class CasadiEvaluator(Evaluator):
    """Final."""

    def __init__(self, x, f, g=None, con_names=None):
        g = cs.SX(0, 1) if g is None else cs.vec(cs.SX(g))
        x = cs.vec(x)
        self.n, self.m, self.n_params = x.numel(), g.numel(), 0
        self._x, self._fexpr, self._gexpr = x, f, g
        self.con_names = con_names
        lam, sig = cs.SX.sym("lam", self.m), cs.SX.sym("sigma")
        J = cs.jacobian(g, x)
        H = cs.tril(cs.hessian(sig * f + cs.dot(lam, g), x)[0])
        jr, jc = J.sparsity().get_triplet()
        hr, hc = H.sparsity().get_triplet()
        self.jac_rows, self.jac_cols = np.array(jr, np.int64), np.array(jc, np.int64)
        self.hess_rows, self.hess_cols = np.array(hr, np.int64), np.array(hc, np.int64)
        self._f = cs.Function("f", [x], [f])
        self._g = cs.Function("g", [x], [g])
        self._gf = cs.Function("gf", [x], [cs.gradient(f, x)])
        self._J = cs.Function("J", [x], [J.nz[:] if J.nnz() else cs.SX(0, 1)])
        self._H = cs.Function("H", [x, lam, sig], [H.nz[:] if H.nnz() else cs.SX(0, 1)])

    def set_params(self, p) -> None:
        pass

    @staticmethod
    def _put(val, out, size):
        v = np.asarray(val, dtype=float).reshape(-1) if size else np.zeros(0)
        if out is None:
            return v.copy()
        out[:] = v
        return out

    def obj(self, x, p=None):
        return float(self._f(x))

    def grad(self, x, out=None, p=None):
        return self._put(self._gf(x), out, self.n)

    def cons(self, x, out=None, p=None):
        return self._put(self._g(x), out, self.m)

    def jac_values(self, x, out=None, p=None):
        return self._put(self._J(x), out, len(self.jac_rows))

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        return self._put(self._H(x, lam, obj_factor), out, len(self.hess_rows))

    def describe_nonfinite(self, x) -> str:
        """Name the first output that is NaN/Inf at x, with its expression."""
        with np.errstate(all="ignore"):
            if not np.isfinite(self.obj(x)):
                return f"objective {str(self._fexpr)[:200]}"
            g = self.cons(x)
            bad = np.flatnonzero(~np.isfinite(g))
            if bad.size:
                i = int(bad[0])
                name = self.con_names[i] if self.con_names else f"g[{i}]"
                return f"constraint {name} = {str(self._gexpr[i])[:200]}"
            if not np.all(np.isfinite(self.grad(x))):
                return f"gradient of the objective {str(self._fexpr)[:200]}"
            jv = self.jac_values(x)
            bad = np.flatnonzero(~np.isfinite(jv))
            if bad.size:
                i = int(self.jac_rows[bad[0]])
                return f"Jacobian of constraint g[{i}] = {str(self._gexpr[i])[:200]}"
        return ""
