"""The augmented KKT system of a problem with an elastic pair per constraint row, the pair
eliminated (IPOPT's AugRestoSystemSolver).

The restoration phase's problem (:mod:`caspar_backend.solver.restoration`) has primal
vector ``v = [w (nw); p (m); n (m)]`` and constraints ``h(w) - p + n = 0``: every row i
has two private columns, ``p_i`` with Jacobian entry -1 and ``n_i`` with +1, neither in
the Hessian.  Its Newton system (:mod:`.base`, sizes ``nw + 2m`` and m) has the rows

    (W + Sigma_w + delta_w I) dw + J^T dy  = r_w
    a_p dp - dy                            = r_p,     a_p = Sigma_p + delta_w
    a_n dn + dy                            = r_n,     a_n = Sigma_n + delta_w
    J dw - dp + dn - delta_c dy            = r_c

(``a_p``, ``a_n`` floored at 1e-30, as a private column's ratio in :mod:`.augmented`).
Eliminating dp and dn,

    dp = (r_p + dy) / a_p,      dn = (r_n - dy) / a_n,

leaves the system of the original problem's structure with the constraint block's
diagonal changed,

    [ W + Sigma_w + delta_w I        J^T               ] [ dw ]   [ r_w                     ]
    [ J                        -(delta_c + d) I        ] [ dy ] = [ r_c + r_p/a_p - r_n/a_n ]

with ``d = 1/a_p + 1/a_n``: an :class:`~.augmented.AugmentedKKT` with eliminated
columns (its ``eliminated_pivots = d``; static term, refinement and pivoting modes are
that system's, the eliminated columns counted in the static term as in the full
matrix).  Since ``a_p, a_n > 0``, the full matrix's inertia is the reduced one's plus
``(2m, 0, 0)`` (Haynsworth), so the required inertia ``(nw + 2m, m, 0)`` of the full
system is the reduced system's ``(nw, m, 0)``.  Refinement runs on the reduced system:
the eliminated rows hold exactly (up to rounding) after the back substitution, so the
reduced residual is the full one's.

Sizes as the method sees them: ``nw`` here is ``nw + 2m`` (the length of ``sigma`` and
of the ``dw`` that :meth:`ElasticKKT.solve` returns); ``jac_values`` has the original
Jacobian's ``nnz_j`` values followed by the pair's 2m constant entries (not read);
``hess_values`` is the reduced system's own buffer (the pair has no Hessian entries).
Array module ``xp`` (numpy or cupy); the buffers are allocated once.
"""

from __future__ import annotations

import numpy as np

from .augmented import AugmentedKKT
from .base import KKTSystem

#: a_p, a_n are floored here (a column without curvature and barrier term)
_PIVOT_FLOOR = 1e-30


def _reduced(name: str):
    """The attribute ``name`` of the reduced system, read and written through."""
    return property(lambda self: getattr(self.reduced, name),
                    lambda self, value: setattr(self.reduced, name, value))


class ElasticKKT(KKTSystem):
    """Final.  The module doc's system; ``nw``, ``m``: the original problem's sizes (the
    system's ``nw`` attribute is ``nw + 2m``); the structures are the original
    problem's (``hess_rows``/``hess_cols``: the Hessian pattern of the problem with the
    pair, whose entries all lie in the first nw columns); the other arguments are
    :class:`~.augmented.AugmentedKKT`'s."""

    name = "augmented"

    delta_w = _reduced("delta_w")
    delta_c = _reduced("delta_c")
    static_regularization = _reduced("static_regularization")
    last_residual_ratio = _reduced("last_residual_ratio")
    last_contraction = _reduced("last_contraction")
    check_inertia = _reduced("check_inertia")
    r = property(lambda self: self.reduced.r)
    lowrank_Q = property(lambda self: self.reduced.lowrank_Q)
    lowrank_c = property(lambda self: self.reduced.lowrank_c)
    #: the factorized matrix's values (the reduced system's)
    values = property(lambda self: self.reduced.values)

    def __init__(self, nw, m, hess_rows, hess_cols, jac_rows, jac_cols, linear_solver,
                 n_lowrank=0, xp=np, max_refinement_steps=10, residual_ratio_max=1e-10,
                 static_regularization=0.0, pattern=None, symbolic=None):
        self.xp = xp
        nw, m = int(nw), int(m)
        self.nw_base, self.m, self.nw = nw, m, nw + 2 * m
        self.sigma = xp.zeros(self.nw)
        self.reduced = AugmentedKKT(
            nw, m, hess_rows, hess_cols, jac_rows, jac_cols, linear_solver,
            n_lowrank=n_lowrank, xp=xp, max_refinement_steps=max_refinement_steps,
            residual_ratio_max=residual_ratio_max,
            static_regularization=static_regularization, pattern=pattern,
            symbolic=symbolic, sigma=self.sigma[:nw], eliminated_pivots=True)
        self.solver = linear_solver
        self.hess_values = self.reduced.hess_values
        self._nj = len(jac_rows)
        self.jac_values = xp.zeros(self._nj + 2 * m)
        self._a_p = xp.zeros(m)
        self._a_n = xp.zeros(m)
        self._t = xp.zeros(m)
        self._rhs_c = xp.zeros(m)

    def build(self) -> None:
        xp, k, nw, m = self.xp, self.reduced, self.nw_base, self.m
        k.jac_values[:] = self.jac_values[:self._nj]
        for a, s in ((self._a_p, self.sigma[nw:nw + m]), (self._a_n, self.sigma[nw + m:])):
            xp.add(s, k.delta_w, out=a)
            xp.maximum(a, _PIVOT_FLOOR, out=a)
        d = k.eliminated_pivots
        xp.divide(1.0, self._a_p, out=d)
        xp.divide(1.0, self._a_n, out=self._t)
        d += self._t
        k.build()

    def expected_inertia(self):
        pos, neg, zero = self.reduced.expected_inertia()
        return (pos + 2 * self.m, neg, zero)

    def factorize(self):
        """The reduced system's factorization; its inertia test is the full system's
        (module doc)."""
        return self.reduced.factorize()

    def solve(self, rhs_w, rhs_c):
        xp, nw, m, N = self.xp, self.nw_base, self.m, self.nw
        r_p, r_n = rhs_w[nw:nw + m], rhs_w[nw + m:N]
        rc = self._rhs_c
        xp.divide(r_p, self._a_p, out=rc)
        rc += rhs_c
        xp.divide(r_n, self._a_n, out=self._t)
        rc -= self._t
        dw, dy = self.reduced.solve(rhs_w[:nw], rc)
        out = xp.empty(N + m)
        out[:nw] = dw
        out[N:] = dy
        dp, dn = out[nw:nw + m], out[nw + m:N]
        xp.add(r_p, dy, out=dp)
        dp /= self._a_p
        xp.subtract(r_n, dy, out=dn)
        dn /= self._a_n
        return out[:N], out[N:]

    def primal_matvec(self, v):
        """``(W + Sigma + delta_w I) v`` over all ``nw + 2m`` columns (new array)."""
        nw, m, N = self.nw_base, self.m, self.nw
        out = self.xp.empty(N)
        out[:nw] = self.reduced.primal_matvec(v[:nw])
        self.xp.multiply(self._a_p, v[nw:nw + m], out=out[nw:nw + m])
        self.xp.multiply(self._a_n, v[nw + m:], out=out[nw + m:])
        return out

    def increase_quality(self) -> bool:
        return self.reduced.increase_quality()

    def decrease_static_regularization(self) -> float | None:
        return self.reduced.decrease_static_regularization()

    def factorize_accurate(self) -> bool:
        return self.reduced.factorize_accurate()

    def enable_pivoting(self) -> bool:
        return self.reduced.enable_pivoting()

    def leave_pivoting(self) -> bool:
        return self.reduced.leave_pivoting()
