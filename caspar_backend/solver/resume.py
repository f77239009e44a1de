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
  running), ``tiny_step``;
* the inertia correction: ``delta_w_last``, ``delta_c_used``, ``static_regularization``,
  ``eps_restore``, ``eps_before_slow`` (None: none), ``slow_rule_off``;
* the termination test: ``last_obj`` (the previous iteration's f, None at iteration 0;
  no acceptable iterate counted yet);
* ``iteration``, ``history`` (the log's records of iterations 0 .. iteration - 1),
  ``counts`` (evaluations so far, SolveResult.counts' keys), ``info`` (the
  :class:`~.iterate.StepInfo` of the step that led to this iterate: this iteration's
  log line).

A run resumed at such a point (:meth:`~.ipm.InteriorPoint.resume`) takes the steps the
uninterrupted run would have taken: same statuses, iterations and iterates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
    delta_w_last: float
    delta_c_used: bool
    static_regularization: float
    eps_restore: float | None
    eps_before_slow: float | None
    slow_rule_off: bool
    last_obj: float | None
    info: StepInfo
    history: tuple
    counts: dict
