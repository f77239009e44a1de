"""A casadi iteration callback for tests of ``nlpsol``'s ``iteration_callback``."""
from __future__ import annotations

import casadi as ca
import numpy as np

#: the inputs of an iteration callback, in casadi's order (nlpsol's outputs)
OUTS = ("x", "f", "g", "lam_x", "lam_g", "lam_p")


class Recorder(ca.Callback):
    """An iteration_callback recording its inputs; it returns ``value(k)`` at its k-th
    call (0-based) and raises ``error`` at call ``error_at``.  Inputs with the given
    sparsities (``lam_p`` declared empty when ``lam_p`` is False: unused)."""

    def __init__(self, n, m, q, value=lambda k: 0, error_at=None, error=ValueError("boom"),
                 lam_p=True):
        ca.Callback.__init__(self)
        self.calls, self.value, self.error_at, self.error = [], value, error_at, error
        self.sp = [ca.Sparsity.dense(n), ca.Sparsity.dense(1), ca.Sparsity.dense(m),
                   ca.Sparsity.dense(n), ca.Sparsity.dense(m),
                   ca.Sparsity.dense(q) if lam_p else ca.Sparsity(0, 0)]
        self.construct("recorder", {})

    def get_n_in(self):
        return ca.nlpsol_n_out()

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return ca.nlpsol_out(i)

    def get_sparsity_in(self, i):
        return self.sp[i]

    def eval(self, arg):
        k = len(self.calls)
        self.calls.append({name: np.array(a, dtype=float).ravel()
                           for name, a in zip(OUTS, arg)})
        if k == self.error_at:
            raise self.error
        return [self.value(k)]
