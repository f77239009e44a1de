"""Development stand-in for :class:`.evaluator.BatchEvaluator`: one single-instance
evaluator per instance, called in a loop (the reference the replicated evaluator is
tested against)."""

from __future__ import annotations

import numpy as np


class LoopBatchEvaluator:
    """Final."""

    xp = np
    device = "cpu"

    def __init__(self, problem, batch_size: int, device: str = "cpu"):
        self.problem, self.batch_size = problem, batch_size
        base = problem.evaluator("cpu")
        self.n, self.m, self.n_params = base.n, base.m, base.n_params
        self.jac_rows, self.jac_cols = base.jac_rows, base.jac_cols
        self.hess_rows, self.hess_cols = base.hess_rows, base.hess_cols
        self._evs = [base.bound(problem.p) for _ in range(batch_size)]

    def set_params(self, P):
        P = np.asarray(P, float).reshape(self.batch_size, -1)
        self._evs = [self.problem.evaluator("cpu", p=P[b]) for b in range(self.batch_size)]

    def zeroth(self, X, f_out, g_out):
        with np.errstate(all="ignore"):
            for b, ev in enumerate(self._evs):
                f_out[b] = ev.obj(X[b])
                if self.m:
                    ev.cons(X[b], g_out[b])

    def first(self, X, grad_out, jac_out):
        with np.errstate(all="ignore"):
            for b, ev in enumerate(self._evs):
                ev.grad(X[b], grad_out[b])
                if self.m:
                    ev.jac_values(X[b], jac_out[b])

    def hess(self, X, Y, obj_factor, out):
        with np.errstate(all="ignore"):
            for b, ev in enumerate(self._evs):
                ev.hess_values(X[b], Y[b], float(obj_factor[b]), out[b])
