"""An evaluator that reports every evaluation it makes to an observer.

A modelling layer may attach work to each evaluation of the problem's functions --
casadi's ``dump_in`` / ``dump_out`` options of IPOPT's oracle Functions write each
call's inputs and outputs to files, numbered by call.  :class:`ObservedEvaluator`
wraps a problem's evaluator ``base`` and an observer with the methods

=======================================  =================================================
observer method                          called after
=======================================  =================================================
``obj(x, p)``                            ``obj(x)``
``cons(x, p)``                           ``cons(x)``
``grad(x, p)``                           ``grad(x)``
``jac(x, p)``                            ``jac_values(x)``
``hess(x, p, lam, obj_factor)``          ``hess_values(x, lam, obj_factor)``
=======================================  =================================================

with ``x``, ``lam`` host float64 vectors (lengths ``n``, ``m``), ``p`` the bound
parameters (length ``n_params``) and ``obj_factor`` a float; the values returned are the
wrapped evaluator's.  As in :class:`~.guarded.GuardedEvaluator` the one-pass shortcuts
(:data:`~.guarded.SHORTCUTS`) are withheld, so every evaluation is reported.
"""

from __future__ import annotations

from typing import final

import numpy as np

from ..arrays.xp import host
from .base import Evaluator
from .guarded import SHORTCUTS


def _h(a) -> np.ndarray:
    return np.asarray(host(a), dtype=float).reshape(-1)


@final
class ObservedEvaluator(Evaluator):
    """Final.  See the module docstring."""

    def __init__(self, base: Evaluator, observer):
        self.base, self.observer = base, observer
        self.xp, self.device = base.xp, base.device
        self.build_seconds = base.build_seconds
        self.structure_cache = base.structure_cache
        self.n, self.m, self.n_params = base.n, base.m, base.n_params
        self.jac_rows, self.jac_cols = base.jac_rows, base.jac_cols
        self.hess_rows, self.hess_cols = base.hess_rows, base.hess_cols

    def __getattr__(self, name):
        if name in SHORTCUTS or name in ("base", "observer"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def bound(self, p) -> "ObservedEvaluator":
        return ObservedEvaluator(self.base.bound(p), self.observer)

    def set_params(self, p) -> None:
        self.base.set_params(p)

    def parameters(self) -> np.ndarray:
        return self.base.parameters()

    def _bind(self, p) -> np.ndarray:
        if p is not None:
            self.base.set_params(p)
        return _h(self.base.parameters())

    def obj(self, x, p=None) -> float:
        q = self._bind(p)
        v = self.base.obj(x)
        self.observer.obj(_h(x), q)
        return v

    def grad(self, x, out=None, p=None):
        q = self._bind(p)
        v = self.base.grad(x, out)
        self.observer.grad(_h(x), q)
        return v

    def cons(self, x, out=None, p=None):
        q = self._bind(p)
        v = self.base.cons(x, out)
        self.observer.cons(_h(x), q)
        return v

    def jac_values(self, x, out=None, p=None):
        q = self._bind(p)
        v = self.base.jac_values(x, out)
        self.observer.jac(_h(x), q)
        return v

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        q = self._bind(p)
        v = self.base.hess_values(x, lam, obj_factor, out)
        self.observer.hess(_h(x), q, _h(lam), float(obj_factor))
        return v

    def describe_nonfinite(self, x) -> str:
        """The wrapped evaluator's description (not an evaluation: nothing reported)."""
        describe = getattr(self.base, "describe_nonfinite", None)
        return describe(x) if describe is not None else ""
