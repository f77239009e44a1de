"""The lockstep interior point's state: B iterates, B filters, the instances' fates.

:class:`BatchIterate` is :class:`~caspar_backend.solver.iterate.Iterate` with a leading
batch axis (``xp`` float64, row b = instance b):

    W (B, nw)  Y (B, m)  ZL (B, nL)  ZU (B, nU)  F (B,)  H (B, m)  G (B, nw)  JV (B, nnz_j)

:class:`BatchFilter` holds B line-search filters as padded arrays ``theta``, ``phi``
(B, K) (a free slot holds +inf in both, which blocks nothing) with IPOPT's filter reset
heuristic per instance (:class:`~caspar_backend.solver.filter.Filter`).

:class:`Fates` records, per instance, whether it still runs in lockstep, the status it
ended with there, or why it left the batch for its own single solve (*ejected*: the
lockstep path implements the common iteration; every rare path -- restoration, the
watchdog, safe slacks, the pivoting switch, refinement fall-backs -- runs as the
single solve it is, from the start, so that its answer is exactly the single one).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(eq=False)
class BatchIterate:
    """Final.  See the module doc."""

    W: object
    Y: object
    ZL: object
    ZU: object
    F: object
    H: object
    G: object
    JV: object

    @classmethod
    def zeros(cls, xp, B, nw, m, nL, nU, nnz_j) -> "BatchIterate":
        return cls(W=xp.zeros((B, nw)), Y=xp.zeros((B, m)), ZL=xp.zeros((B, nL)),
                   ZU=xp.zeros((B, nU)), F=xp.zeros(B), H=xp.zeros((B, m)),
                   G=xp.zeros((B, nw)), JV=xp.zeros((B, nnz_j)))

    def take(self, rows) -> "BatchIterate":
        """The iterates of the instances ``rows`` (an index array), new arrays."""
        return BatchIterate(*(getattr(self, k)[rows] for k in
                              ("W", "Y", "ZL", "ZU", "F", "H", "G", "JV")))


class BatchFilter:
    """Final.  B filters (module doc); ``mask`` arguments are (B,) bool arrays selecting
    the instances a call applies to."""

    def __init__(self, xp, B, capacity=8):
        self.xp = xp
        self.theta = xp.full((B, capacity), np.inf)
        self.phi = xp.full((B, capacity), np.inf)
        self.rejected_by_filter = xp.zeros(B, bool)
        self.filter_rejections = xp.zeros(B, np.int64)
        self.n_resets = xp.zeros(B, np.int64)

    def keep(self, rows, move=lambda a: a, xp=None) -> None:
        """Keep the filters of the instances ``rows`` (an index array), in that order,
        passed through ``move`` (to another array module ``xp``)."""
        for name in ("theta", "phi", "rejected_by_filter", "filter_rejections",
                     "n_resets"):
            setattr(self, name, move(getattr(self, name)[rows]))
        self.xp = self.xp if xp is None else xp

    def reset(self, mask) -> None:
        m2 = mask[:, None]
        self.theta[...] = self.xp.where(m2, np.inf, self.theta)
        self.phi[...] = self.xp.where(m2, np.inf, self.phi)
        self.rejected_by_filter &= ~mask
        self.filter_rejections[...] = self.xp.where(mask, 0, self.filter_rejections)

    def acceptable(self, theta, phi):
        """(B,) bool: no entry dominates (theta_b, phi_b)."""
        blocked = (theta[:, None] >= self.theta) & (phi[:, None] >= self.phi)
        return ~blocked.any(axis=1)

    def add(self, mask, theta, phi) -> None:
        """Add (theta_b, phi_b) to the filters of ``mask``; entries the new one dominates
        are dropped (the acceptance set is unchanged), as Filter.add does."""
        xp = self.xp
        m2 = mask[:, None]
        drop = m2 & (self.theta >= theta[:, None]) & (self.phi >= phi[:, None])
        self.theta[drop] = np.inf
        self.phi[drop] = np.inf
        free = self.theta == np.inf
        if bool((mask & ~free.any(axis=1)).any()):
            B, K = self.theta.shape
            pad = xp.full((B, K), np.inf)
            self.theta = xp.concatenate([self.theta, pad], axis=1)
            self.phi = xp.concatenate([self.phi, pad.copy()], axis=1)
            free = self.theta == np.inf
        slot = xp.argmax(free, axis=1)
        rows = xp.flatnonzero(mask) if hasattr(xp, "flatnonzero") else xp.nonzero(mask)[0]
        self.theta[rows, slot[rows]] = theta[rows]
        self.phi[rows, slot[rows]] = phi[rows]

    def note_acceptance(self, mask, max_resets: int, trigger: int) -> None:
        """Filter.note_acceptance for the instances of ``mask``."""
        xp = self.xp
        can = mask & (self.n_resets < max_resets)
        rej = can & self.rejected_by_filter
        self.filter_rejections[...] = xp.where(rej, self.filter_rejections + 1,
                                               xp.where(can, 0, self.filter_rejections))
        fire = rej & (self.filter_rejections >= trigger)
        if bool(fire.any()):
            self.reset(fire)
            self.n_resets += fire
        self.rejected_by_filter &= ~mask


#: why an instance left the lockstep run (index = code); 0: it did not
EJECT_REASONS = (
    "",
    "invalid number at the starting point",
    "invalid number in a derivative",
    "singular KKT matrix (degeneracy test)",
    "pivoting switch of the inertia correction",
    "no regularization gave the right inertia",
    "iterative refinement fall-back",
    "step not finite",
    "safe slacks",
    "watchdog",
    "line search failed (soft restoration / restoration phase)",
    "invalid number at every trial point",
)


class Fates:
    """Final.  Host arrays over the B instances of the run (its original numbering,
    whatever rows the lockstep arrays hold now): ``running`` (bool), ``status`` (int
    code into ``names``, -1 while running or ejected), ``eject`` (int code into
    :data:`EJECT_REASONS`, 0 = not ejected) and ``iterations``.  ``finish`` and
    ``leave`` take a bool mask over those instances."""

    def __init__(self, B, names):
        self.names = list(names)
        self.running = np.ones(B, bool)
        self.status = np.full(B, -1, np.int64)
        self.eject = np.zeros(B, np.int64)
        self.iterations = np.zeros(B, np.int64)

    def finish(self, mask, status: str, iteration: int) -> None:
        mask = mask & self.running
        self.status[mask] = self.names.index(status)
        self.iterations[mask] = iteration
        self.running &= ~mask

    def leave(self, mask, reason: str) -> None:
        mask = mask & self.running
        self.eject[mask] = EJECT_REASONS.index(reason)
        self.running &= ~mask
