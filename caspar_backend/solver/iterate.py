"""The interior point's state as explicit types.

An :class:`Iterate` is a primal-dual point of the barrier problem
(:class:`~caspar_backend.solver.nlp.BarrierNLP`) with the function values at it:

    w      (nw,)     primal variables
    y      (m,)      constraint multipliers (Lagrangian L = f + y^T h - zL^T sL + zU^T sU)
    zL     (nL,)     multipliers of the finite lower bounds, in the order of ``iL``
    zU     (nU,)     multipliers of the finite upper bounds, in the order of ``iU``
    f      float     objective f(w)
    h      (m,)      constraint residual h(w)
    gradf  (nw,)     gradient of f at w
    jv     (nnz_j,)  Jacobian values at w, in the BarrierNLP's COO order

All arrays are float64 arrays of the NLP's array module ``xp`` (NumPy or CuPy),
allocated once and overwritten in place; ``version`` counts writes to ``w`` (the slacks
of the current iterate are formed once per version, :mod:`.quantities`).

A :class:`Direction` is a Newton step at an iterate, with what the line search needs
from its computation.  :class:`BarrierParameter` holds mu and the fraction-to-the-
boundary parameter tau; :class:`StepInfo` the values the iteration log prints.

The leading dimension of every array is the problem's; a batch of instances adds a
leading axis to each array and turns the scalars (``f``, ``mu``, ``tau``) into arrays
of the batch size.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(eq=False)
class Iterate:
    """Final.  See the module doc for the fields' formats."""

    w: object
    y: object
    zL: object
    zU: object
    h: object
    gradf: object
    jv: object
    f: float = 0.0
    version: int = 0

    @classmethod
    def zeros(cls, xp, nw: int, m: int, nL: int, nU: int, nnz_j: int) -> "Iterate":
        return cls(w=xp.zeros(nw), y=xp.zeros(m), zL=xp.zeros(nL), zU=xp.zeros(nU),
                   h=xp.zeros(m), gradf=xp.zeros(nw), jv=xp.zeros(nnz_j))

    def moved(self) -> None:
        """``w`` was written: quantities cached for the former ``w`` are stale."""
        self.version += 1

    def primal_dual(self):
        """``(w, y, zL, zU)``, the arrays themselves."""
        return self.w, self.y, self.zL, self.zU

    def set_primal_dual(self, w, y, zL, zU) -> None:
        """Copy a primal-dual point into this iterate's arrays (``w`` moves; f, h and
        the derivatives are the caller's to re-evaluate)."""
        self.w[:], self.y[:], self.zL[:], self.zU[:] = w, y, zL, zU
        self.moved()

    def copy_primal_dual(self):
        """New arrays ``(w, y, zL, zU)``."""
        return self.w.copy(), self.y.copy(), self.zL.copy(), self.zU.copy()


@dataclass(eq=False)
class Direction:
    """Final.  A Newton step ``(dw, dy, dzL, dzU)`` at the iterate it was computed at,
    with that iterate's barrier gradient ``gphi`` (nw,) and the primal right-hand side
    ``rhs_w`` (nw,) (second-order corrections solve with it again).  ``step_bounds``
    caches ``(key, (alpha_primal_max, alpha_dual_max))`` for the key ``(tau,
    safe_slack_mode)`` it was computed under (a direction belongs to its iterate, also
    when the watchdog restores both).  ``finite``: a 0-d array, nonzero when dw and dy
    are finite -- read back with the line search's reference values (one host read
    for both), None once known.  ``unsettled``: where the solve's refinement test is
    not read yet (the device), its :class:`Unsettled` -- read with the same values."""

    dw: object
    dy: object
    dzL: object
    dzU: object
    gphi: object
    rhs_w: object
    step_bounds: tuple | None = None
    finite: object = None
    unsettled: object = None


@dataclass
class Unsettled:
    """Final.  A tentative direction's unread refinement test: ``columns`` (0-d device
    values) to read, and ``finish(values)`` -> the direction that stands once they are
    read (the same :class:`Direction`, another one, or None: no usable step)."""

    columns: tuple
    finish: object


@dataclass
class BarrierParameter:
    """Final.  The barrier parameter mu and the fraction-to-the-boundary parameter
    ``tau = max(tau_min, 1 - mu)``."""

    mu: float
    tau: float
    #: IPOPT's free mu mode (mu_strategy 'adaptive': the oracle sets mu; the bound
    #: multipliers' safeguard then measures against the average complementarity)
    free: bool = False


@dataclass
class StepInfo:
    """Final.  The per-iteration values of IPOPT's log besides the errors: the step
    lengths, the number of line-search trials, the direction's max-norm, the Hessian
    perturbation delta_w and the step's tag (``f``/``h`` filter step kinds, ``F``/``H``
    after a second-order correction, ``w`` watchdog, ``T`` tiny, ``s``/``S`` soft
    restoration, ``r`` restoration)."""

    alpha_du: float = 0.0
    alpha_pr: float = 0.0
    ls: int = 0
    d_norm: float = 0.0
    delta_w: float = 0.0
    tag: str = " "

    def take(self, other: "StepInfo") -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(other, name))


@dataclass
class Timers:
    """Final.  Seconds spent in KKT assembly, factorization and solves, over a solve and
    its restoration phases.  ``device_sync``: wait for the device before each clock
    reading (the option ``timing_statistics``), so that a phase's device work counts in
    that phase; without it a phase's time is the host's, and device work queued in it
    counts where the host next waits."""

    build: float = 0.0
    factor: float = 0.0
    solve: float = 0.0
    device_sync: bool = True

    @property
    def linear_algebra(self) -> float:
        return self.build + self.factor + self.solve

