"""The filter of the line search (Waechter & Biegler 2006, section 2.3).

A filter is a set of pairs ``(theta_j, phi_j)`` (constraint violation, barrier objective)
already shifted by the margins ``gamma_theta``/``gamma_phi`` when they were added.  A trial
point ``(theta, phi)`` is acceptable iff no entry dominates it, i.e. for every entry
``theta < theta_j or phi < phi_j``.  Pairs are stored in two growing lists; IPOPT keeps
the full set too (it is reset whenever the barrier parameter changes).

The filter also keeps the state of IPOPT's filter reset heuristic (FilterLSAcceptor):
``rejected_by_filter`` says whether the last rejected trial point of the current line
search failed the filter (rather than the tests against the current iterate), and
``filter_rejections`` counts the successive line searches whose accepted point came after
such a rejection; :meth:`note_acceptance` empties the filter when that count reaches
``filter_reset_trigger``, at most ``max_filter_resets`` times per solve — the option's
documented meaning.  (IPOPT 3.14 compares its reset counter with ``max_filter_resets`` but
never increments it, so it resets without limit; followed literally, the Pyomo model
``x^2 + y^2 <= 1, x + y >= 3`` then accepts ever shorter h-type steps between resets for
all 3000 iterations instead of reaching the restoration phase and "locally infeasible",
as IPOPT's own run does.)

The acceptance tests' arithmetic lives here too: :func:`compare_le` (IPOPT's relative
round-off allowance) and :func:`_max_trials` (the backtracking's bound on trials).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = np.finfo(float).eps
_TINY = float(np.finfo(float).smallest_subnormal)



class Filter:
    """Final."""

    __slots__ = ("theta", "phi", "rejected_by_filter", "filter_rejections", "n_resets")

    def __init__(self):
        self.theta: list = []
        self.phi: list = []
        self.rejected_by_filter = False
        self.filter_rejections = 0
        self.n_resets = 0           # heuristic resets of this solve (reset() keeps it)

    def reset(self):
        self.theta.clear()
        self.phi.clear()
        self.rejected_by_filter = False
        self.filter_rejections = 0

    def note_acceptance(self, max_resets: int, trigger: int) -> None:
        """A trial point was accepted: the filter reset heuristic's bookkeeping."""
        if self.n_resets < max_resets:
            if self.rejected_by_filter:
                self.filter_rejections += 1
                if self.filter_rejections >= trigger:
                    self.reset()
                    self.n_resets += 1
            else:
                self.filter_rejections = 0
        self.rejected_by_filter = False

    def acceptable(self, theta: float, phi: float) -> bool:
        for tj, pj in zip(self.theta, self.phi):
            if theta >= tj and phi >= pj:
                return False
        return True

    def add(self, theta: float, phi: float) -> None:
        # drop entries the new one dominates: keeps the list short, same acceptance set
        keep = [(t, p) for t, p in zip(self.theta, self.phi) if t < theta or p < phi]
        self.theta = [t for t, _ in keep] + [theta]
        self.phi = [p for _, p in keep] + [phi]

    def __len__(self):
        return len(self.theta)


def _max_trials(alpha: float, r: float) -> int:
    """How many trial step sizes ``alpha r^k`` (k = 0, 1, ...) backtracking may try: up
    to the first k with ``alpha r^k <= _TINY`` (exact arithmetic), the smallest positive
    float, i.e. ``K + 1`` trials with ``K = ceil(log(_TINY / alpha) / log r)``; one trial
    when ``r`` is 0 or 1 or ``alpha`` is not above ``_TINY``.  Every representable
    ``alpha_min > 0`` is passed within K reductions (up to the rounding of the last
    subnormal steps), so the bound changes no search that ended on alpha_min; it ends
    those that would not: ``alpha_min = 0`` (an underflowed theta or gphi^T dw) with
    ``alpha`` rounded to 0.0 or stalled at the smallest subnormal (``r > 1/2``)."""
    if not (0.0 < r < 1.0 and alpha > _TINY):
        return 1
    return int(math.ceil(math.log(_TINY / alpha) / math.log(r))) + 1


def compare_le(a, b, ref):
    """a <= b up to IPOPT's relative round-off allowance."""
    return a - b <= 10.0 * _EPS * abs(ref)


#: the smallest positive double (a denominator in place of an underflow to 0)
_SMALLEST = math.ulp(0.0)


def ieee_pow(a: float, b: float) -> float:
    """``a ** b`` for ``a >= 0`` as IEEE arithmetic (IPOPT's C++) gives it: ``inf`` where
    Python's float power raises OverflowError, never below the smallest positive double
    where it is divided by (an underflow to 0 would raise ZeroDivisionError, where C++
    divides to ``inf``)."""
    try:
        return max(a ** b, _SMALLEST) if a > 0 else 0.0
    except OverflowError:
        return math.inf
