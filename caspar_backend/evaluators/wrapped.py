"""An evaluator around another one: what every wrapper shares.

A wrapper (:class:`~.guarded.GuardedEvaluator`, :class:`~.observed.ObservedEvaluator`)
adds host work to the evaluations of a problem's evaluator ``base`` and changes no
structure: the sizes, the Jacobian's and Hessian's COO patterns, the array module and
device, the structure cache and the build time are the base's.  The base's one-pass
shortcuts (:data:`SHORTCUTS`) are withheld, so the solver evaluates through the
interface methods the wrapper defines; every other attribute is the base's.
"""

from __future__ import annotations

from abc import ABC

import numpy as np

from .base import Evaluator

#: optional evaluation methods of evaluators that would bypass a wrapper (the solver
#: falls back to the interface methods without them); ``problem``: an evaluator made
#: from it would not be wrapped
SHORTCUTS = frozenset({"obj_and_cons", "grad_and_jac", "obj_unread", "problem"})


class WrappedEvaluator(Evaluator, ABC):
    """Abstract.  See the module docstring; subclasses define the interface methods."""

    def __init__(self, base: Evaluator):
        self.base = base
        self.xp, self.device = base.xp, base.device
        self.build_seconds = base.build_seconds
        self.structure_cache = base.structure_cache
        self.n, self.m, self.n_params = base.n, base.m, base.n_params
        self.jac_rows, self.jac_cols = base.jac_rows, base.jac_cols
        self.hess_rows, self.hess_cols = base.hess_rows, base.hess_cols

    def __getattr__(self, name):
        # (only for names the wrapper itself lacks; "base" before __init__ set it)
        if name in SHORTCUTS or name == "base":
            raise AttributeError(name)
        return getattr(self.base, name)

    def set_params(self, p) -> None:
        self.base.set_params(p)

    def parameters(self) -> np.ndarray:
        return self.base.parameters()

    def describe_nonfinite(self, x) -> str:
        """The base's description of a non-finite value at ``x`` ('' without one)."""
        describe = getattr(self.base, "describe_nonfinite", None)
        return describe(x) if describe is not None else ""
