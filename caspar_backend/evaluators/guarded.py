"""An evaluator whose values are an evaluation error wherever a point check fails.

IPOPT counts a point where the user's functions raise as an evaluation error: at the
starting point (or at an accepted point's derivatives) the solve ends
Invalid_Number_Detected, in the line search the step is cut back.  A modelling layer's
point-wise checks -- casadi's ``MX.attachAssert``, which casadi's MX evaluation raises
and an expansion to SX (caspar's compiled expressions, casadi's own ``expand``) drops --
are such errors.  :class:`GuardedEvaluator` wraps a problem's evaluator ``base`` and a
check ``failure(x, p) -> str | None`` (host float64 vectors of lengths ``n`` and
``n_params``; None where the point passes, else the reason): at a point that fails,
every value -- objective, gradient, constraints, Jacobian, Hessian -- is NaN, which the
solver's finiteness checks turn into IPOPT's behaviour, and :meth:`describe_nonfinite`
gives the reason.  The check runs once per point (the last point's outcome is kept);
``on_failure(reason)``, when given, is called at each new failing point.  On a GPU
evaluator the point is copied to the host for the check.

The wrapped evaluator's one-pass shortcuts (:data:`SHORTCUTS`: ``obj_and_cons``,
``grad_and_jac``, ``obj_unread``) are withheld, so every evaluation passes the check;
everything else the solver may ask of an evaluator is the wrapped one's.
"""

from __future__ import annotations

from typing import Callable, final

import numpy as np

from ..arrays.xp import host
from .base import Evaluator
from .wrapped import SHORTCUTS, WrappedEvaluator

__all__ = ["GuardedEvaluator", "SHORTCUTS"]


@final
class GuardedEvaluator(WrappedEvaluator):
    """Final.  See the module docstring."""

    def __init__(self, base: Evaluator, failure: Callable, on_failure: Callable | None = None):
        super().__init__(base)
        self._failure, self._on_failure = failure, on_failure
        self._point: bytes | None = None     # the last point checked, and its outcome
        self._reason: str | None = None

    def bound(self, p) -> "GuardedEvaluator":
        return GuardedEvaluator(self.base.bound(p), self._failure, self._on_failure)

    def set_params(self, p) -> None:
        super().set_params(p)
        self._point = None

    def failure(self, x, p=None) -> str | None:
        """Why ``x`` fails the check (None: it passes); ``p`` is bound first if given."""
        if p is not None:
            self.set_params(p)
        xh = np.asarray(host(x), dtype=float).reshape(-1)
        key = xh.tobytes()
        if key != self._point:
            reason = self._failure(xh, self.base.parameters())
            self._point, self._reason = key, reason
            if reason is not None and self._on_failure is not None:
                self._on_failure(reason)
        return self._reason

    def _nan(self, out, size: int):
        if out is None:
            return self.xp.full(size, np.nan)
        out[...] = np.nan
        return out

    def obj(self, x, p=None) -> float:
        return np.nan if self.failure(x, p) else self.base.obj(x)

    def grad(self, x, out=None, p=None):
        return self._nan(out, self.n) if self.failure(x, p) else self.base.grad(x, out)

    def cons(self, x, out=None, p=None):
        return self._nan(out, self.m) if self.failure(x, p) else self.base.cons(x, out)

    def jac_values(self, x, out=None, p=None):
        if self.failure(x, p):
            return self._nan(out, len(self.jac_rows))
        return self.base.jac_values(x, out)

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        if self.failure(x, p):
            return self._nan(out, len(self.hess_rows))
        return self.base.hess_values(x, lam, obj_factor, out)

    def describe_nonfinite(self, x) -> str:
        reason = self.failure(x)
        return reason if reason is not None else super().describe_nonfinite(x)
