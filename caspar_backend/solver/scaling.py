"""The reductions of IPOPT's gradient-based scaling, on the host or on the device.

IPOPT's ``nlp_scaling_method = gradient-based`` scales the objective by
``df = max(gmin, gmax / ||grad f(x0)_free||_inf)`` and constraint row i by
``dc_i = max(gmin, gmax / ||J_i(x0)||_inf)``, each only where the norm exceeds ``gmax``
(:meth:`~.nlp.SlackNLP._compute_scaling`; a NaN norm leaves it unscaled).  This module
computes the two norms:

* :func:`free_grad_norm`: ``max_j |grad f_j|`` over the free variables, a host float
  (one read on the device);
* :class:`RowNormPlan`: ``||J_i||_inf`` for every row from the Jacobian's values in the
  evaluator's COO order, a host vector (m,).  On the host ``numpy.maximum.at`` over the
  kept entries, as IPOPT's row loop; on the device one launch of the fused
  ``row_abs_max`` over a CSR plan of the rows built once per structure (the slack
  problem's structure cache keeps it), then one read of m values -- instead of copying
  every Jacobian value to the host (tens of MB at 10^6 rows).  The same maxima either way
  (a maximum does not depend on the order; a NaN propagates in both).
"""

from __future__ import annotations

import numpy as np

from ..arrays import amax_abs, csr_rows, fused, host, is_host, scalars


def free_grad_norm(xp, gradf, free, free_d, all_free: bool) -> float:
    """``max |gradf[free]|`` (0.0 with no free variable; NaN when a value is NaN):
    ``gradf`` an ``xp`` vector, ``free`` the free indices on the host, ``free_d`` on
    the device."""
    if is_host(xp):
        return float(np.max(np.abs(gradf[free]))) if len(free) else 0.0
    return scalars(xp, amax_abs(xp, gradf if all_free else gradf[free_d]))[0]


class RowNormPlan:
    """Final.  ``rows`` (host int64, the evaluator's Jacobian rows) restricted to the
    positions ``keep`` (host int64, or None for all), ``m`` rows, for ``xp``'s device.
    ``plan(xp, jv)``: the host vector (m,) of ``max(0, max |jv_k|)`` over each row's
    kept entries.  Cached with the slack structure: built once, never written."""

    def __init__(self, xp, rows, keep, m: int):
        self.m = int(m)
        kept = rows if keep is None else rows[keep]
        if is_host(xp):
            self.keep, self.rows = keep, kept
            return
        indptr, order = csr_rows(kept, self.m)
        self.perm_d = xp.asarray(order if keep is None else np.asarray(keep)[order])
        self.indptr_d = xp.asarray(indptr)

    def __call__(self, xp, jv) -> np.ndarray:
        if is_host(xp):
            vals = np.abs(jv if self.keep is None else jv[self.keep])
            out = np.zeros(self.m)
            with np.errstate(invalid="ignore"):     # NaN rows are left unscaled
                np.maximum.at(out, self.rows, vals)
            return out
        out = xp.empty(self.m)
        fused.call(xp, "row_abs_max", jv, self.perm_d, self.indptr_d, out)
        return host(out)
