"""casadi's ``MX.attachAssert`` in an NLP: checked at every point caspar evaluates.

``y = x.attachAssert(cond, msg)`` is ``x`` with a check: evaluating an MX Function that
computes ``y`` raises ``Assertion error: msg`` unless ``cond`` is 1.  IPOPT's nlpsol
evaluates the user's MX Functions, so a failing assertion is an evaluation error there
(casadi prints its warning; at the starting point the solve ends
Invalid_Number_Detected, in the line search the step is cut back).  ``expand()`` drops
assertions (SX has none), and caspar compiles the expanded expressions -- so:

* :func:`.chains.assertion_sites` finds the Functions of the NLP whose MX
  body holds an assertion (the NLP itself or any Function it calls, through Maps too);
  the reader records their names in the model's ``meta["assertions"]``;
* :class:`AssertionCheck` evaluates the user's ``f`` and ``g`` as casadi's MX
  ``Function('nlp_assertions', [x, p], [f, g])`` at a point and returns casadi's
  message where an assertion fails; the front end runs its solves through
  :class:`~caspar_backend.evaluators.guarded.GuardedEvaluator` with it, on the general
  path (the compiled kernels have no host check).

The values caspar solves with stay the compiled ones: the check only decides whether a
point is an evaluation error.  Its cost, one MX evaluation of f and g per point, is paid
only by NLPs that hold an assertion.
"""

from __future__ import annotations

from typing import final

import numpy as np

import casadi as ca

from caspar_backend.user_warnings import warn

from .compiler import casadi_message
from .nlpsol_oracle import nlp_function


@final
class AssertionCheck:
    """``check(x, p) -> str | None``: casadi's message where an assertion of the NLP
    ``nlp`` (an nlpsol dict of MX) fails at ``(x, p)`` (host float64 nonzero vectors),
    None where all hold (final)."""

    def __init__(self, nlp: dict, sites: list[str]):
        self.sites = list(sites)
        self._fn = nlp_function(nlp, "nlp_assertions")
        self._sp_x, self._sp_p = self._fn.sparsity_in(0), self._fn.sparsity_in(1)

    def __call__(self, x, p) -> str | None:
        try:
            self._fn.call([ca.DM(self._sp_x, np.asarray(x, float)),
                           ca.DM(self._sp_p, np.asarray(p, float))])
        except RuntimeError as exc:
            return casadi_message(exc)
        return None

    def wrap(self, evaluator):
        """``evaluator`` (one solve's) whose values are NaN where an assertion fails,
        each message warned once in the solve."""
        from caspar_backend.evaluators.guarded import GuardedEvaluator

        seen: set[str] = set()

        def report(reason: str) -> None:
            if reason not in seen:
                seen.add(reason)
                self.warn(reason)

        return GuardedEvaluator(evaluator, self, report)

    @staticmethod
    def warn(reason: str) -> None:
        """casadi's warning for a failed evaluation (shown again in every solve: casadi
        warns of each failed evaluation)."""
        warn(f"caspar: the NLP's evaluation failed at a point ({reason}); the point counts "
             "as an evaluation error, as in IPOPT's nlpsol", repeat=True)
