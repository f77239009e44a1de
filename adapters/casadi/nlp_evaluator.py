"""IPOPT's evaluation of an NLP: casadi's own functions of the user's expressions.

caspar evaluates a Function called in a deep chain (single shooting through
``mapaccum``, ``fold``, loops) as an opaque call, composing exact derivatives level by
level (``caspar_backend.opaque``): each call's full Jacobian in every argument, and the
second derivatives for the Hessian.  That pays where casadi's own symbolic Hessian
would take minutes to build (the 1,000-step rocket).  But when the user gives the
Hessian -- IPOPT's ``hess_lag``, which IPOPT iterates with (a Gauss-Newton Hessian in
casadi's sysid example) -- only f, g, grad f and the Jacobian of g are left to evaluate,
and casadi's reverse and forward modes through the chain give them in a few sweeps,
where the composition forms a Jacobian per call that is dense in all its arguments (the
sysid example at N = 2,000: 4 s per gradient against casadi's 40 ms).  So such problems
are evaluated as IPOPT's nlpsol evaluates them, by :class:`CasadiNlpEvaluator`:

* ``nlp``: ``Function('nlp', [x, p], [f, g])`` of the user's expressions (and f and g
  apart, so that evaluating one does not run the other's chain);
* ``grad``: its ``grad:f:x`` (reverse mode), ``jac``: its ``jac:g:x`` (casadi's choice
  of forward or reverse mode and its sparsity), in the Jacobian's column-major order;
* the Hessian is not this evaluator's: the front end wraps it with the user's
  (:meth:`~.nlpsol_derivatives.UserDerivatives.hessian`).

``function_options``: casadi Function options for all of them -- the nlpsol's ``jit``,
``compiler`` and ``jit_options``, which IPOPT's nlpsol applies to these very functions
(casadi's sysid example asks for them: compiled, its gradient takes milliseconds).
"""

from __future__ import annotations

from typing import final

import numpy as np

import casadi as ca

from caspar_backend.evaluators.base import Evaluator


@final
class CasadiNlpEvaluator(Evaluator):
    """Final.  See the module docstring.  ``nlp``: the nlpsol dict (``x``, ``p``,
    ``f``, ``g``, casadi symbols)."""

    device = "cpu"
    xp = np

    def __init__(self, nlp: dict, function_options: dict | None = None):
        x = nlp["x"]
        sym = type(x)
        # the parts nlpsol allows to be left out: no p, f = 0, no g
        p = nlp.get("p", sym(0, 1))
        f = nlp.get("f", sym(0))
        g = nlp.get("g", sym(0, 1))
        p, f, g = (sym(v) if not isinstance(v, (ca.SX, ca.MX)) else v for v in (p, f, g))
        fo = dict(function_options or {})
        fg = ca.Function("nlp", [x, p], [f, g], ["x", "p"], ["f", "g"], fo)
        self._fg = fg
        self._f = ca.Function("nlp_f", [x, p], [f], ["x", "p"], ["f"], fo)
        self._grad = _with_options(fg.factory("nlp_grad_f", ["x", "p"], ["f", "grad:f:x"]), fo)
        self._jac = _with_options(fg.factory("nlp_jac_g", ["x", "p"], ["jac:g:x"]), fo)
        self._g = ca.Function("nlp_g", [x, p], [g], ["x", "p"], ["g"], fo)
        self._sp_x, self._sp_p = fg.sparsity_in(0), fg.sparsity_in(1)
        self.n, self.n_params, self.m = x.nnz(), p.nnz(), g.nnz()
        jac_sp = self._jac.sparsity_out(0)
        if jac_sp.size1() != self.m or jac_sp.size2() != self.n:
            raise ValueError(f"jac:g:x has shape {jac_sp.dim()}, expected "
                             f"{self.m}x{self.n}")
        r, c = jac_sp.get_triplet()
        self.jac_rows = np.asarray(r, dtype=np.int64)
        self.jac_cols = np.asarray(c, dtype=np.int64)
        self.hess_rows = self.hess_cols = np.zeros(0, dtype=np.int64)
        self.p = np.zeros(self.n_params)

    def set_params(self, p) -> None:
        self.p = np.asarray(p, dtype=float).reshape(-1).copy()

    def _args(self, x, p):
        if p is not None:
            self.set_params(p)
        return [ca.DM(self._sp_x, np.asarray(x, dtype=float).reshape(-1)),
                ca.DM(self._sp_p, self.p)]

    @staticmethod
    def _into(dm, out, size):
        v = np.asarray(ca.DM(dm).nonzeros(), dtype=float) if size else np.zeros(0)
        if out is None:
            return v
        out[...] = v
        return out

    def obj(self, x, p=None) -> float:
        return float(self._f.call(self._args(x, p))[0])

    def grad(self, x, out=None, p=None):
        # a dense gradient: grad:f:x may have structural zeros
        g = ca.densify(self._grad.call(self._args(x, p))[1])
        return self._into(g, out, self.n)

    def cons(self, x, out=None, p=None):
        return self._into(ca.densify(self._g.call(self._args(x, p))[0]), out, self.m)

    def jac_values(self, x, out=None, p=None):
        return self._into(self._jac.call(self._args(x, p))[0], out, len(self.jac_rows))

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        raise NotImplementedError("CasadiNlpEvaluator has no Hessian: the front end "
                                  "gives the user's (hess_lag)")


def _with_options(fn, options: dict):
    """``fn`` itself, or (with options) a Function of the same signature calling it,
    made with ``options`` (a factory's derivative Functions take no Function options:
    the JIT applies to the wrapper, whose generated code includes ``fn``'s)."""
    if not options:
        return fn
    sym = fn.mx_in()
    return ca.Function(fn.name(), sym, fn.call(sym), fn.name_in(), fn.name_out(), options)
