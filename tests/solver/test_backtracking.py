"""Termination of the backtracking loop (``LineSearch._backtrack``).

The trial step sizes are ``alpha_max r^k`` (r = alpha_red_factor) while ``alpha >=
alpha_min``.  With ``alpha_min = 0`` (theta = 0 at the current iterate, so IPOPT's
formula gives 0) and every trial rejected, alpha underflows to 0.0 (or, for r > 1/2,
stalls at the smallest subnormal) and the rule alone never ends; the loop must end after
``_max_trials`` trials.  A normal alpha_min must give the same trials as before.

The line search runs on stand-ins for the run's components: a calculator whose every
trial point is evaluated (or not, ``ok``), and an acceptance test that rejects all.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from caspar_backend.solver import filter as ls_mod  # (the backtracking bound lives there)
from caspar_backend.errors import OptionError
from caspar_backend.solver.linesearch import LineSearch
from caspar_backend.solver.options import resolve_options

_GUARD = 10**6   # a trial count no terminating search reaches: a hang becomes a failure


class _Calc:
    """The pieces of BarrierQuantities that _backtrack uses; every trial counted."""

    xp, nw, m = np, 2, 0

    def __init__(self, ok=True):
        self.ok, self.trials, self.alphas, self.invalid_calls = ok, 0, [], 0

    def step_bounds(self, d, tau):
        return 1.0, 1.0

    def trial_point(self, wt, h_t):
        self.trials += 1
        self.alphas.append(float(wt[0]))
        if self.trials > _GUARD:
            raise RuntimeError("backtracking does not end")
        return 1.0, self.ok, 0.0, 2.0

    def invalid(self, w, what):
        self.invalid_calls += 1


def _search(monkeypatch, theta, r=0.5, ok=True, skip_first=False):
    calc = _Calc(ok)
    opts = resolve_options(dict(alpha_red_factor=r))
    it = SimpleNamespace(w=np.zeros(2))
    ls = LineSearch(opts, calc, it, SimpleNamespace(tau=0.99, mu=0.1), None, None,
                    SimpleNamespace(), False)
    ls.set_theta_bounds(0.0)                        # theta_min = 1e-4
    monkeypatch.setattr(LineSearch, "_acceptable", lambda self, *a: "")
    d = SimpleNamespace(dw=np.array([1.0, 0.0]))
    status, n, f_t = ls._backtrack(d, (theta, 1.0, -1.0), skip_first, False, False)
    return status, n, calc


def _k(alpha, r):
    return math.ceil(math.log(ls_mod._TINY / alpha) / math.log(r))


@pytest.mark.parametrize("r", [0.5, 0.9, 0.1])
def test_alpha_min_zero_ends(monkeypatch, r):
    """theta = 0 <= theta_min and gphi^T dw < 0: alpha_min = 0.05 min(gamma_theta,
    gamma_phi 0, 0) = 0.  The search ends, rejected, after at most K + 1 trials (exactly
    K + 1 = 1075 for r = 1/2, whose powers are exact down to the smallest subnormal 2^-1074;
    earlier where the rounded steps reach 0.0 first)."""
    status, n, calc = _search(monkeypatch, theta=0.0, r=r)
    assert status == "rejected"
    assert n == calc.trials <= _k(1.0, r) + 1
    if r == 0.5:
        assert calc.alphas == [2.0 ** -k for k in range(1075)]
    assert all(a > 0.0 for a in calc.alphas)          # no trial of length 0


def test_alpha_min_zero_skip_first_and_invalid_trials(monkeypatch):
    """From the second step size on (the watchdog's restart), and with trial points that
    cannot be evaluated (the search then reports the invalid number)."""
    status, n, calc = _search(monkeypatch, theta=0.0, ok=False, skip_first=True)
    assert status == "rejected" and calc.invalid_calls == 1
    assert calc.trials == _k(0.5, 0.5) + 1 == 1074 and n == calc.trials + 1


@pytest.mark.parametrize("r", [0.0, 1.0])
def test_degenerate_reduction_factors_are_refused(r):
    """IPOPT's range 0 < r < 1: r = 0 and r = 1 are errors naming the option (r = 1 would
    repeat one trial forever; :func:`_max_trials` bounds even that to one trial)."""
    with pytest.raises(OptionError, match="alpha_red_factor"):
        resolve_options(dict(alpha_red_factor=r))


def test_positive_alpha_min_unchanged(monkeypatch):
    """theta = 1 > theta_min: alpha_min = 0.05 min(1e-5, 1e-8) = 5e-10; the trials are
    2^-k >= 5e-10, k = 0..30, as the rule alone gives."""
    status, n, calc = _search(monkeypatch, theta=1.0)
    assert status == "rejected"
    assert calc.alphas == [2.0 ** -k for k in range(31)]


def test_max_trials_bound():
    assert ls_mod._max_trials(1.0, 0.5) == 1074 + 1
    assert ls_mod._max_trials(ls_mod._TINY, 0.5) == 1
    assert ls_mod._max_trials(1.0, 1.0) == ls_mod._max_trials(1.0, 0.0) == 1
