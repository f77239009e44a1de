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
    bnorm = None
    converged = False
    rn = 0.0
    rn_prev = None
    rho = 0.0
    ratio = 0.0
    for step in range(max_steps + 1):
        res = residual(x)
        if step == 0:
            # the first solve's ratio is never tested (at least one correction): read
            # nothing back for it (a non-finite x stays non-finite and fails below)
            correct(res, x)
            continue
        if bnorm is None:
            bnorm, rn, xn = scalars(xp, *fused.call(xp, "amax_abs3", b, res, x))
        else:
            rn_prev = rn
            rn, xn = scalars(xp, *fused.call(xp, "amax_abs2", res, x))
            rho = rn / rn_prev if rn_prev > 0 else 0.0
        ratio = rn / (1.0 + bnorm + min(xn, 1e6 * bnorm))
        if not math.isfinite(ratio):
            break
        if ratio <= ratio_max and step >= 1:
            converged = True
            break
        if step == max_steps:
            break
        correct(res, x)
    if converged:
        return ratio, rho
    if regularized:
        return (rn / bnorm if bnorm > 0 else 0.0), rho
    return ratio, rho
