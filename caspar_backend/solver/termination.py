"""Termination tests of the interior point (IPOPT's OptimalityErrorConvergenceCheck).

With the scaled errors ``e`` and the user's unscaled ones ``ue`` of the current iterate
(:meth:`~.quantities.BarrierQuantities.errors` / ``unscaled``):

* ``Solve_Succeeded``: ``E0 <= tol`` and the unscaled dual, constraint and
  complementarity errors within ``dual_inf_tol``, ``constr_viol_tol``,
  ``compl_inf_tol``;
* ``Solved_To_Acceptable_Level``: the ``acceptable_*`` tolerances and
  ``acceptable_obj_change_tol`` hold at ``acceptable_iter`` iterates in a row (IPOPT's
  CurrentIsAcceptable); the latest acceptable iterate is kept, for the line search's
  fall-back;
* ``Diverging_Iterates``: ``max |w| > diverging_iterates_tol``;
* ``Maximum_Iterations_Exceeded``, ``Maximum_WallTime_Exceeded``,
  ``Maximum_CpuTime_Exceeded`` (this process's CPU time since
  the solve's start).
"""

from __future__ import annotations

import math
import time

from .iterate import Iterate


class Termination:
    """Final.  The acceptable-iterate counter, the stored acceptable point and the
    objective history the acceptable test compares with."""

    def __init__(self, opts):
        self.opts = opts
        self.acceptable_count = 0
        self.acceptable_point = None   # (w, y, zL, zU) of the latest acceptable iterate
        self.last_obj = None
        self.prev_obj = None

    def check(self, e, ue, it: Iterate, iteration: int, t0: float, cpu0: float = None):
        """The status the current iterate ends the solve with, or None.  Call once per
        iteration (it records the objective for the next call's change test)."""
        o = self.opts
        if (e["E0"] <= o.tol and ue["dual"] <= o.dual_inf_tol
                and ue["constr"] <= o.constr_viol_tol and ue["compl"] <= o.compl_inf_tol):
            return "Solve_Succeeded"
        if self.acceptable(e, ue, self.obj_change(it.f, update=True)):
            # IPOPT keeps the latest acceptable iterate for a failed line search
            # (StoreAcceptablePoint / RestoreAcceptablePoint)
            if self.acceptable_point is None:      # buffers, allocated once
                self.acceptable_point = it.copy_primal_dual()
            else:
                for buf, v in zip(self.acceptable_point, it.primal_dual()):
                    buf[:] = v
            self.acceptable_count += 1
            if self.acceptable_count >= o.acceptable_iter:
                return "Solved_To_Acceptable_Level"
        else:
            self.acceptable_count = 0
        if e["wmax"] > o.diverging_iterates_tol:
            return "Diverging_Iterates"
        if iteration >= o.max_iter:
            return "Maximum_Iterations_Exceeded"
        if time.perf_counter() - t0 > o.max_wall_time:
            return "Maximum_WallTime_Exceeded"
        if cpu0 is not None and time.process_time() - cpu0 > o.max_cpu_time:
            return "Maximum_CpuTime_Exceeded"
        return None

    def obj_change(self, f: float, update: bool) -> float:
        """|f - f_prev| / max(1, |f|), f_prev the objective at the previous iteration's
        check.  ``update``: this is the iteration's check (its f is kept for the next);
        otherwise a later test within the same iteration (IPOPT's CurrentIsAcceptable
        compares with the previous iteration's objective too)."""
        if update:
            self.prev_obj, self.last_obj = self.last_obj, f
        ref = self.prev_obj
        return abs(f - ref) / max(1.0, abs(f)) if ref is not None else math.inf

    def acceptable(self, e, ue, objchg) -> bool:
        """IPOPT's CurrentIsAcceptable: the acceptable_* tolerances all hold."""
        o = self.opts
        return (o.acceptable_iter > 0 and e["E0"] <= o.acceptable_tol
                and ue["dual"] <= o.acceptable_dual_inf_tol
                and ue["constr"] <= o.acceptable_constr_viol_tol
                and ue["compl"] <= o.acceptable_compl_inf_tol
                and objchg <= o.acceptable_obj_change_tol)
