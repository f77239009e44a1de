"""The result of one solve."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .status import STATUSES


@dataclass(frozen=True)
class IterationRecord:
    """One line of the iteration log (values as IPOPT prints them).

    ``inf_pr`` is the unscaled constraint violation (max-norm) -- of the original problem
    also during the restoration phase, as IPOPT prints it --, ``inf_du`` the scaled dual
    infeasibility (max-norm; the restoration problem's during restoration),
    ``regularization`` delta_w (0 when none), ``ls`` the number of line-search trials,
    ``step_type`` IPOPT's one-letter tag ('f', 'h', 'F', 'H', 'r', ...) and
    ``restoration`` whether the iteration belongs to the restoration phase."""

    iter: int
    objective: float
    inf_pr: float
    inf_du: float
    mu: float
    d_norm: float
    regularization: float
    alpha_du: float
    alpha_pr: float
    ls: int
    step_type: str
    restoration: bool


@dataclass(frozen=True)
class SolveResult:
    """Primal-dual solution in the user's (unscaled, full) space.

    Sign convention (CasADi's): with L = f + lam_g^T g + lam_x^T x, ``lam_x < 0`` where a
    lower bound is active and ``> 0`` at an upper bound; ``lam_g`` likewise.  ``x, g,
    lam_x, lam_g`` are float64 NumPy arrays of length n, m, n, m.  ``timings`` maps phase
    ('function_evaluations', 'kkt_factorization', 'kkt_solve', 'other', 'total') to
    seconds; ``counts`` maps evaluation kind to number of calls."""

    x: np.ndarray
    f: float
    g: np.ndarray
    lam_g: np.ndarray
    lam_x: np.ndarray
    status: str
    iterations: int
    message: str
    timings: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    history: list = field(default_factory=list)
    final_errors: dict = field(default_factory=dict)
    extra: Any = None
    #: evaluation kind -> (wall seconds, process seconds) of its calls, where measured
    #: (the general path; the compiled path evaluates inside its kernels: empty)
    eval_seconds: dict = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return STATUSES[self.status].success

    @property
    def kind(self) -> str:
        return STATUSES[self.status].kind
