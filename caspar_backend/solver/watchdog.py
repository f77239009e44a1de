"""The line search's watchdog (IPOPT's BacktrackingLineSearch; Chamberlain, Powell,
Lemarechal & Pedersen's non-monotone safeguard).

After ``watchdog_shortened_iter_trigger`` consecutive iterations whose first trial step
was rejected, the current iterate, its direction and its reference values
``(theta, phi, gphi^T dw)`` are stored and up to ``watchdog_trial_iter_max`` iterations
take the full fraction-to-the-boundary step unchecked (log tag ``w``), each first tested
against the stored reference values and the filter; when one passes, the procedure ends
there.  When none does, the stored iterate is restored and searched along its stored
direction by ordinary backtracking from the second trial step on.  A change of mu ends
the procedure without restoring (IPOPT resets the watchdog whenever mu changes).  The
procedure itself is driven by :meth:`~caspar_backend.solver.linesearch.LineSearch.search`;
this module holds its state.
"""

from __future__ import annotations


class Watchdog:
    """The line search's watchdog state (one per interior-point object).  Final."""

    def __init__(self):
        self.last_mu = None
        self.shortened = 0          # consecutive iterations with a shortened step
        self.active = False
        self.trials = 0
        self.saved = None           # (w, y, zL, zU, d, ref) at the watchdog start

    def reset(self):
        self.active, self.saved, self.shortened, self.trials = False, None, 0, 0

    def start(self, it, d, ref):
        """Store the iterate ``it`` (a copy), its direction and reference values."""
        self.active, self.trials = True, 0
        self.saved = (*it.copy_primal_dual(), d, ref)

    def stop(self, it, calc):
        """Restore the stored point into ``it`` (re-evaluated with ``calc``, the run's
        :class:`~.quantities.BarrierQuantities`); returns its (direction, reference
        values)."""
        w, y, zL, zU, d, ref = self.saved
        it.set_primal_dual(w, y, zL, zU)
        calc.reevaluate(it)
        self.active, self.saved, self.shortened = False, None, 0
        return d, ref
