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
wrapped evaluator's.  The one-pass shortcuts are withheld (:mod:`.wrapped`), so every
evaluation is reported.
"""

from __future__ import annotations

from typing import final

import numpy as np

from ..arrays.xp import host
from .base import Evaluator
from .wrapped import WrappedEvaluator


def _h(a) -> np.ndarray:
    return np.asarray(host(a), dtype=float).reshape(-1)


@final
class ObservedEvaluator(WrappedEvaluator):
    """Final.  See the module docstring."""

    def __init__(self, base: Evaluator, observer):
        super().__init__(base)
        self.observer = observer

    def bound(self, p) -> "ObservedEvaluator":
        return ObservedEvaluator(self.base.bound(p), self.observer)

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
