"""A point to resume an interior-point run at: its whole state as an iteration begins.

The compiled path (:mod:`caspar_backend.compiled`) runs the same algorithm as
:class:`~.ipm.InteriorPoint`; where its kernels hand a solve over (a path they do not
implement: the restoration phase, the pivoting switch, ...), the general path continues
from the start of the iteration in which they did, instead of solving again from x0
(:mod:`caspar_backend.compiled.resume` builds the point from the kernel's workspace).
A :class:`ResumePoint` holds everything the run's loop carries from one iteration to the
next, in the run's own terms:

* the iterate of the scaled slack problem (:class:`~.iterate.Iterate`'s fields, host
  float64 arrays): ``w`` (nw), ``y`` (m), ``zL`` (nL), ``zU`` (nU), ``f``, ``h`` (m),
  ``gradf`` (nw), ``jv`` (nnz_j, the slack problem's COO order) -- values, not
  re-evaluated, so that the evaluation counts and the last bits are the run's;
* ``mu``, ``tau``;
* the filter: ``filter_entries`` ((theta, phi) pairs, in any order: acceptance does not
  depend on it), ``rejected_by_filter``, ``filter_rejections``, ``filter_resets``
  (:class:`~.filter.Filter`);
* the line search: ``theta_min``, ``theta_max``, ``last_mu`` (None: none yet),
  ``shortened`` (the watchdog's count of shortened steps; the watchdog itself is not
  running), ``tiny_step`` (the last step a flagged tiny step: IPOPT's tiny_step_flag),
  ``tiny_last`` (it was tiny with a small multiplier step: tiny_step_last_iteration_);
* the inertia correction: ``delta_w_last``, ``degeneracy``, ``static_regularization``,
  ``eps_restore``, ``eps_before_slow`` (None: none), ``slow_rule_off``;
* the termination test: ``last_obj`` (the previous iteration's f, None at iteration 0),
  ``acceptable_count`` (acceptable iterates in a row before this one) and
  ``acceptable_point`` (``(w, y, zL, zU)`` of the latest acceptable iterate, host
  arrays; None before any);
* the solve's restoration phases so far: ``n_resto`` and ``resto_mu_kept`` (IPOPT's
  first restoration keeps its first mu update: :class:`~.ipm.Shared`);
* the printed log: ``log`` (the :class:`~.log.IterationLog` an earlier general turn
  of this solve started, None: none yet, or nothing printed) and ``logged`` (how many
  of ``history`` it has handled), so that the next turn prints ``history[logged:]``
  and goes on with it;
* ``iteration``, ``history`` (the log's records of iterations 0 .. iteration - 1: the
  solve's own list, which the next turn adopts and appends to -- no copy per turn),
  ``counts`` (evaluations so far, SolveResult.counts' keys), ``info`` (the
  :class:`~.iterate.StepInfo` of the step that led to this iterate: this iteration's
  log line).

A run resumed at such a point (:meth:`~.ipm.InteriorPoint.resume`) takes the steps the
uninterrupted run would have taken: same statuses, iterations and iterates.  The other
way, a run resumed from the kernels hands the solve back to them once its state is one
they can represent (:func:`kernel_can_go_on`: no pivoting mode, no
soft restoration, the watchdog idle, ...) by raising :class:`HandBack` with its own
point (:func:`state_point`) as an iteration begins.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..arrays import host
from .iterate import StepInfo


@dataclass(frozen=True, eq=False)
class ResumePoint:
    """Final.  See the module doc for the fields' formats."""

    iteration: int
    w: np.ndarray
    y: np.ndarray
    zL: np.ndarray
    zU: np.ndarray
    f: float
    h: np.ndarray
    gradf: np.ndarray
    jv: np.ndarray
    mu: float
    tau: float
    filter_entries: tuple
    rejected_by_filter: bool
    filter_rejections: int
    filter_resets: int
    theta_min: float
    theta_max: float
    last_mu: float | None
    shortened: int
    tiny_step: bool
    tiny_last: bool
    delta_w_last: float
    degeneracy: tuple
    static_regularization: float
    eps_restore: float | None
    eps_before_slow: float | None
    slow_rule_off: bool
    last_obj: float | None
    info: StepInfo
    history: list
    counts: dict
    n_resto: int = 0
    resto_mu_kept: bool = False
    log: object = None
    logged: int = 0
    acceptable_count: int = 0
    acceptable_point: tuple | None = None


#: the filter entries the kernels hold (compiled/workspace_layout.FILTER_CAP)
KERNEL_FILTER_CAP = 64
#: the step tags the kernels' history holds (compiled/kernels/record.TAGS)
KERNEL_TAGS = (" ", "f", "h", "F", "H", "T", "w")


class FreshStart:
    """Final.  In place of a :class:`ResumePoint`: a general run from x0 whose start the
    kernels do not implement (an initialization option: a warm start, least-squares
    bound multipliers, :data:`caspar_backend.compiled.options.START_OPTIONS`) but whose
    iterations they do; it hands the solve to them at its first iteration they can take
    (``solve_nlp``'s ``resume``; :func:`caspar_backend.compiled.dispatch.solve`)."""

    __slots__ = ()

    def __repr__(self):
        return "FRESH_START"


#: the :class:`FreshStart` marker
FRESH_START = FreshStart()


class HandBack(Exception):
    """Raised by a run resumed from the kernels to hand the solve back to them at
    ``point`` (a :class:`ResumePoint`); the driver returns the point."""

    def __init__(self, point: ResumePoint):
        super().__init__(f"hand back at iteration {point.iteration}")
        self.point = point


def kernel_can_go_on(ipm) -> bool:
    """Whether the compiled kernels can take the state of the run ``ipm`` (an
    :class:`~.ipm.InteriorPoint`) as an iteration begins (the module doc): the main run
    with the exact Hessian and monotone mu, qdldl out of any pivoting mode (but a small
    K's Bunch-Kaufman, which the kernels run too), no soft
    restoration, the watchdog idle, no safe slacks, a filter and a step tag the kernels
    can hold."""
    ls, k = ipm.line_search, ipm.kkt
    return (not ipm.resto and ipm.lbfgs is None
            and k.name == "augmented" and k.solver.name == "qdldl"
            and (k.solver.pivots or not k.solver.pivoting)
            and not ls.soft_resto and not ls.watchdog.active
            and not ipm.calc.safe_slack_mode
            and len(ls.filter) <= KERNEL_FILTER_CAP and ipm.info.tag in KERNEL_TAGS)


def state_point(ipm) -> ResumePoint:
    """The run ``ipm``'s :class:`ResumePoint` as the current iteration begins
    (:meth:`~.ipm.InteriorPoint.resume`'s inverse; host copies)."""
    it, ls, ic, flt = ipm.it, ipm.line_search, ipm.inertia, ipm.line_search.filter
    return ResumePoint(
        iteration=ipm.sh.iter, w=host(it.w).copy(), y=host(it.y).copy(),
        zL=host(it.zL).copy(), zU=host(it.zU).copy(), f=float(it.f),
        h=host(it.h).copy(), gradf=host(it.gradf).copy(), jv=host(it.jv).copy(),
        mu=ipm.barrier.mu, tau=ipm.barrier.tau,
        filter_entries=tuple(zip(flt.theta, flt.phi)),
        rejected_by_filter=flt.rejected_by_filter,
        filter_rejections=flt.filter_rejections, filter_resets=flt.n_resets,
        theta_min=ls.theta_min, theta_max=ls.theta_max, last_mu=ls.watchdog.last_mu,
        shortened=ls.watchdog.shortened, tiny_step=ls.tiny_step, tiny_last=ls.tiny_last,
        delta_w_last=ic.delta_w_last, degeneracy=ic.degeneracy.state(),
        static_regularization=ipm.kkt.static_regularization,
        eps_restore=ic.eps_restore, eps_before_slow=ic.eps_before_slow,
        slow_rule_off=ic.slow_rule_off, last_obj=ipm.termination.last_obj,
        info=replace(ipm.info), history=ipm.sh.history,
        counts=dict(ipm.sh.counter.counts), n_resto=ipm.sh.n_resto,
        resto_mu_kept=ipm.sh.resto_mu_kept, log=ipm.sh.log,
        logged=len(ipm.sh.history) + (1 if ipm.line_unprinted else 0),
        acceptable_count=ipm.termination.acceptable_count,
        acceptable_point=(None if ipm.termination.acceptable_point is None else
                          tuple(host(a).copy() for a in ipm.termination.acceptable_point)))

