"""The filter of the line search (Waechter & Biegler 2006, section 2.3).

A filter is a set of pairs ``(theta_j, phi_j)`` (constraint violation, barrier objective)
already shifted by the margins ``gamma_theta``/``gamma_phi`` when they were added.  A trial
point ``(theta, phi)`` is acceptable iff no entry dominates it, i.e. for every entry
``theta < theta_j or phi < phi_j``.  Pairs are stored in two growing lists; IPOPT keeps
the full set too (it is reset whenever the barrier parameter changes).
"""

from __future__ import annotations


class Filter:
    """Final."""

    __slots__ = ("theta", "phi")

    def __init__(self):
        self.theta: list = []
        self.phi: list = []

    def reset(self):
        self.theta.clear()
        self.phi.clear()

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
