"""Iterative refinement of a KKT solve against the true KKT matrix.

Given the right-hand side ``b``, a first solution ``x`` from a factorization of an
approximation of ``K`` (static pivot regularization, or a condensed system whose
factorization loses accuracy), the residual map ``residual(x) = b - K x`` and the
correction map ``correct(r) ~ K^{-1} r`` (the same factorization), refinement repeats

    x <- x + correct(b - K x)

and stops when

    ratio = ||b - K x||_inf / (1 + ||b||_inf + min(||x||_inf, 1e6 ||b||_inf)) <= ratio_max

after at least one correction (IPOPT's ``min_refinement_steps = 1``: near the end, with
slacks ~1e-14 from their bounds, the first solve can pass the ratio test while leaving
~1e-8 in the constraint rows); the first solve's residual is therefore corrected without
reading its norms back.  The cap on ``||x||`` is IPOPT's ComputeResidualRatio: a
huge ``x`` must not make any residual look small.  Each step reads its norms back in one
host transfer (:func:`~caspar_backend.arrays.scalars`).

The *contraction* of the last step, ``rho = ||r_k||_inf / ||r_{k-1}||_inf`` (0 when fewer
than two residuals were read), tells how far the factorized matrix is from K: refinement
against a static term E contracts the error by about ``||(K + E)^{-1} E||`` per step, and
in directions where K's eigenvalues lie below E's entries by nearly 1, so that a ratio
test dominated by well-resolved rows (or by a large ``||x||``) can pass while those
directions are still wrong.  A contraction that is not small is the visible sign of it.
"""

from __future__ import annotations

import math

from ..arrays import fused, scalars


def refine(xp, b, x, residual, correct, max_steps, ratio_max, regularized):
    """Refine ``x`` (an ``xp`` array, updated in place: ``correct(r, x)`` adds the
    correction ``A^{-1} r`` to it) and return ``(ratio, rho)``:
    ``rho`` the last step's contraction (module doc) and ``ratio`` the residual ratio the
    caller reports as ``last_residual_ratio``: the final ratio when refinement converged
    (0.0 when ``max_steps`` is 0), otherwise — when the factorized matrix differed from
    K only by a static ``regularized`` term — the residual relative to ``b`` alone (a
    singular K solved only thanks to the regularization gives a huge ``x`` whose residual
    is of the order of ``b``; IPOPT's linear solver would have reported the singularity),
    or the last ratio."""
    if not max_steps:
        return 0.0, 0.0
    first = FirstTest(xp, b, x, residual, correct, max_steps, ratio_max, regularized)
    return first.finish(scalars(xp, *first.columns))


class FirstTest:
    """Final.  :func:`refine` up to its first ratio test, the norms of that test
    (``||b||, ||r_1||, ||x||``) launched but not read: :attr:`columns` (0-d device
    values) can travel with a later read, and :meth:`finish` goes on from their values
    exactly as :func:`refine` would have.  ``max_steps`` >= 1."""

    def __init__(self, xp, b, x, residual, correct, max_steps, ratio_max, regularized):
        self.xp, self.b, self.x = xp, b, x
        self.residual, self.correct = residual, correct
        self.max_steps, self.ratio_max, self.regularized = max_steps, ratio_max, regularized
        # the first solve's ratio is never tested (at least one correction): nothing is
        # read back for it (a non-finite x stays non-finite and fails the test)
        correct(residual(x), x)
        self.res = residual(x)
        self.columns = fused.call(xp, "amax_abs3", b, self.res, x)

    def passes(self, values) -> float | None:
        """The first test's ratio where it passes (refinement ends there: contraction
        0), else None; ``values`` the :attr:`columns` as read."""
        bnorm, rn, xn = values
        ratio = rn / (1.0 + bnorm + min(xn, 1e6 * bnorm))
        return ratio if ratio <= self.ratio_max else None

    def finish(self, values):
        """:func:`refine`'s ``(ratio, rho)``, going on from the first test's ``values``."""
        xp, x, res = self.xp, self.x, self.res
        bnorm, rn, xn = values
        converged = False
        rho = 0.0
        step = 1
        while True:
            ratio = rn / (1.0 + bnorm + min(xn, 1e6 * bnorm))
            if not math.isfinite(ratio):
                break
            if ratio <= self.ratio_max:
                converged = True
                break
            if step == self.max_steps:
                break
            self.correct(res, x)
            step += 1
            res = self.residual(x)
            rn_prev = rn
            rn, xn = scalars(xp, *fused.call(xp, "amax_abs2", res, x))
            rho = rn / rn_prev if rn_prev > 0 else 0.0
        if converged:
            return ratio, rho
        if self.regularized:
            return (rn / bnorm if bnorm > 0 else 0.0), rho
        return ratio, rho
