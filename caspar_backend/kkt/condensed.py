"""The condensed ("lifted") KKT system: a positive definite system in the variables only.

For problems in which every constraint row has a slack of its own (caspar's SlackNLP with
``kkt_system='condensed'`` relaxes each equality ``g_i = b_i`` to a band
``b_i - d_i <= g_i <= b_i + d_i``; Shin, Pacaud & Anitescu's *lifted* KKT system, MadNLP's
``SparseCondensedKKTSystem`` with ``RelaxEquality``), the primal vector splits as

    w = [x (nx);  s (m: column nx + i is the slack of row i);  e (ne)]

where every column of ``s`` and ``e`` has exactly one Jacobian entry and no Hessian
entry.  ``e`` are *elastic* columns (the restoration phase's ``p`` and ``n``), each in
one row, with a positive barrier term.  The Newton system of :mod:`.base`,

    [ W + Sx + dw I        0              0           Jx^T  ] [dx]   [r_x]
    [ 0             Ss + dw I             0           diag(a)] [ds] = [r_s]
    [ 0                  0           Se + dw I        Ee^T  ] [de]   [r_e]
    [ Jx              diag(a)            Ee          -dc I  ] [dy]   [r_c]

(``a``: the slack coefficients, -1 in SlackNLP; ``Ee``: the elastic entries; ``Sx``,
``Ss``, ``Se``: the parts of Sigma; ``dw``, ``dc``: delta_w, delta_c), is reduced by
eliminating ``de``, then ``ds`` and ``dy`` row by row.  With ``Ss' = Ss + dw``,
``Se' = Se + dw`` (required > 0) and, per row i,

    delta_i = dc + sum_{e in row i} a_e^2 / Se'_e            (dual diagonal)
    rc'_i   = r_c,i - sum_{e in row i} a_e r_e,e / Se'_e
    den_i   = a_i^2 + delta_i Ss'_i,     D_i = Ss'_i / den_i,
    t_i     = D_i rc'_i - a_i r_s,i / den_i,

the step solves the **condensed system** of order nx

    K_c dx = r_x + Jx^T t,        K_c = W + Sx + dw I + Jx^T D Jx,

and the rest follows without dividing by ``Ss'`` (a slack without bounds has ``Ss = 0``):

    dy = D (Jx dx) - t,   ds_i = (rc'_i - (Jx dx)_i + delta_i dy_i) / a_i,
    de = (r_e - a_e dy_row(e)) / Se'.

Inertia: the (s, y) block of each row, ``[[Ss', a], [a, -delta]]``, has determinant
``-(a^2 + delta Ss') < 0``, i.e. one positive and one negative eigenvalue, and the
``e`` block is positive definite, so by Haynsworth's inertia additivity the Newton
matrix has the required inertia ``(nw, m, 0)`` **iff K_c is positive definite**: a
factorization of K_c with ``nx`` positive pivots is the inertia test (a Cholesky
factorization succeeding; qdldl's and cuDSS's LDL^T count the signs of D).

Formats: ``W`` lower-triangle COO ``(hess_rows, hess_cols)``, both indices < nx,
duplicates summed; ``A = [Jx, diag(a), Ee]`` COO ``(jac_rows, jac_cols)`` in w-space, no
duplicates.  ``Jx^T D Jx`` has a fixed pattern: for every row and every pair of its
x-entries ``(p, q)`` (``p`` before or equal to ``q`` in the row) one contribution
``J_p J_q D_row`` to entry ``(col_p, col_q)``.  The linear solver receives K_c's
**upper triangle in CSC** (0-based int64, every diagonal present), assembled from

    src = [hess_values (nnz_h),  Sx + dw (nx),  J_p J_q D_row (one per pair)]

by the fixed-order segment sum of :mod:`.arrays` through a map computed once on the
host (as :class:`~caspar_backend.kkt.augmented.AugmentedKKT` does; with the rest of the
structural work it is a :class:`~.pattern.CondensedPattern`).  ``build()`` is
gathers and products into preallocated buffers (``D_row J_p`` per Jacobian entry, then
one product per pair) plus the segment sum.

``solve`` refines iteratively (:mod:`.refinement`) against the **full** Newton matrix
above, applied as an :class:`~caspar_backend.arrays.IndexedMatVec` over the value
buffers (no matrix is assembled), with the condensed solve as the correction (MadNLP's
Richardson iteration): the condensation multiplies entries by ``D``, which grows like
``z^2/mu`` on the slack of an active constraint, and refinement restores the accuracy
of the full system that the factorization of K_c loses.

Regularization: ``D_i <= 1/delta_i <= 1/dc``.  A relaxed equality's slack lives in a
band of width ``2d`` (``d`` ~1e-9 relative), so on the central path, where
``z (s - l) = mu``, ``Ss >= mu/(2d)^2``: 2.5e16 at mu = 0.1.  Then ``Jx^T D Jx`` reaches
1e20, rounding in the factorization (~1e4) hides the curvature of W (the pivots' signs
become noise: AC-OPF case118 needed delta_w ~ 1e2-1e4 in most iterations, 89
iterations instead of 23) and refinement diverges.  The system therefore asks for the
constraint regularization ``dc = jacobian_regularization_value *
mu^jacobian_regularization_exponent`` (IPOPT's for a degenerate Jacobian, ~1e-8 mu^0.25)
in every factorization (:attr:`regularize_constraints_always`), which bounds ``D`` by
~1e8 mu^-0.25 (MadNLP's condensed system, too, adds the dual regularization to every
perturbed factorization); it vanishes with mu.  When refinement still fails,
the positive pivots are not trusted (:attr:`inaccurate_solve_means_wrong_inertia`) and
the inertia correction raises delta_w.

Array module: ``xp`` (numpy or cupy).  Value buffers and vectors live in ``xp`` and are
allocated once; structures are host int64.  An iteration allocates nothing of the size
of the Jacobian, the Hessian or K_c; vector-sized temporaries only.
"""

from __future__ import annotations

import numpy as np

from ..linsolve.base import Factorization
from ..arrays import gather
from .base import KKTSystem
from .pattern import CondensedPattern
from .refinement import refine


class CondensedKKT(KKTSystem):
    """Final.  See the module doc; ``nx`` leading entries of w are the variables."""

    name = "condensed"
    #: K_c's entries span ``|W|`` to ``|J|^2 D`` (up to 1e20 with D ~ 1e16): its
    #: positive pivots prove positive definiteness only to that rounding
    inaccurate_solve_means_wrong_inertia = True
    #: D <= 1/delta: delta_c > 0 bounds K_c's entries (module doc)
    regularize_constraints_always = True

    def __init__(self, nw, m, nx, hess_rows, hess_cols, jac_rows, jac_cols, linear_solver,
                 xp=np, max_refinement_steps=10, residual_ratio_max=1e-10,
                 pattern: CondensedPattern | None = None, symbolic=None):
        """``pattern``: the :class:`~.pattern.CondensedPattern` of these arguments when
        the caller has it (a cached one), else built here; ``symbolic``: the linear
        solver's shared analysis of its structure (``linear_solver.symbolic``), or
        None."""
        self.xp = xp
        self.nw, self.m, self.nx = int(nw), int(m), int(nx)
        nw, m, nx = self.nw, self.m, self.nx
        if pattern is None:
            pattern = CondensedPattern(nw, m, nx, hess_rows, hess_cols, jac_rows, jac_cols,
                                       xp)
        self.pattern = pt = pattern
        ne = self.ne = pt.ne
        # ---- condensed matrix K_c: upper-triangle CSC of order nx
        self.structure = pt.structure
        self.nnz = pt.nnz
        self.n_pairs = pt.n_pairs
        nh = self._nh = pt.nh
        self._assemble = pt.assemble
        self._csrc = xp.zeros(nh + nx + pt.n_pairs)
        self._pair_a, self._pair_b = pt.pair_a, pt.pair_b
        self._pair_tmp = xp.zeros(pt.n_pairs)
        self.values = xp.zeros(self.nnz)
        # ---- the full Newton matrix, for refinement: value source
        # src = [hess_values, jac_values, Sigma + dw (nw), -dc (m)]
        N = self.N = pt.N
        nj = pt.nnz_j
        self._src = xp.zeros(nh + nj + N)
        self.hess_values = self._src[:nh]
        self.jac_values = self._src[nh:nh + nj]
        self._diag_w = self._src[nh + nj:nh + nj + nw]
        self._diag_c = self._src[nh + nj + nw:]
        # the pattern's products (K, Jx, Jx^T) with values of this system's own
        self._kmv = pt.kmv.fresh()
        self._kx = xp.zeros(N)
        self._jmv, self._jtmv = pt.jmv.fresh(), pt.jtmv.fresh()
        # ---- per-row and per-entry vectors
        self._jx_pos, self._jx_row = pt.jx_pos, pt.jx_row
        self._jxv = xp.zeros(pt.n_jx)              # Jx's values, gathered by build
        self._jxd = xp.zeros(pt.n_jx)              # D_row J_p
        self._s_pos, self._e_pos = pt.s_pos, pt.e_pos
        self._e_row = pt.e_row
        self._e_sum = pt.e_sum
        self._a_s, self._a_e = xp.zeros(m), xp.zeros(ne)
        self._e_tmp = xp.zeros(ne)
        self._delta = xp.zeros(m)
        self._den = xp.zeros(m)
        self._D = xp.zeros(m)
        self.sigma = xp.zeros(nw)
        self._rhs = xp.zeros(N)
        self.solver = linear_solver
        # the dense Bunch-Kaufman of a small K is the augmented (saddle-point) system's:
        # its zero-pivot rule reads cancellation as dependent rows, while the condensed
        # matrix's pivots cancel by construction (J^T D J with D up to 1/delta)
        if hasattr(linear_solver, "small_pivoting"):
            linear_solver.small_pivoting = False
        if nx:
            self.solver.analyse(self.structure, symbolic)
        self.max_refinement_steps = max_refinement_steps
        self.residual_ratio_max = residual_ratio_max
        self.last_residual_ratio = 0.0

    # ------------------------------------------------------------------ values
    def build(self) -> None:
        xp, nx, m = self.xp, self.nx, self.m
        xp.add(self.sigma, self.delta_w, out=self._diag_w)
        self._diag_c[:] = -self.delta_c
        for mv, val in ((self._kmv, self._src), (self._jmv, self.jac_values),
                        (self._jtmv, self.jac_values)):
            mv.update(val)
        # dual diagonal delta and the row factors D (module doc)
        sig_s = self._diag_w[nx:nx + m]
        gather(xp, self.jac_values, self._s_pos, self._a_s)
        if self.ne:
            gather(xp, self.jac_values, self._e_pos, self._a_e)
            xp.multiply(self._a_e, self._a_e, out=self._e_tmp)
            self._e_tmp /= self._diag_w[nx + m:]
            self._e_sum(self._e_tmp, self._delta)
            self._delta += self.delta_c
        else:
            self._delta[:] = self.delta_c
        xp.multiply(self._delta, sig_s, out=self._den)
        self._den += self._a_s * self._a_s
        xp.divide(sig_s, self._den, out=self._D)
        # K_c's source entries: W, Sx + dw, (D_row J_p) J_q
        gather(xp, self.jac_values, self._jx_pos, self._jxv)
        gather(xp, self._D, self._jx_row, self._jxd)
        self._jxd *= self._jxv
        nh = self._nh
        self._csrc[:nh] = self.hess_values
        self._csrc[nh:nh + nx] = self._diag_w[:nx]
        prod = self._csrc[nh + nx:]
        gather(xp, self._jxd, self._pair_a, prod)
        gather(xp, self._jxv, self._pair_b, self._pair_tmp)
        prod *= self._pair_tmp
        self._assemble(self._csrc, self.values)

    def expected_inertia(self):
        return (self.nx, 0, 0)

    def factorize(self):
        if not self.nx:
            return Factorization(True, 0, 0, 0), True
        fact = self.solver.factorize(self.values)
        return fact, fact.ok and fact.inertia == self.expected_inertia()

    # ------------------------------------------------------------------ solve
    def _condensed_solve(self, b):
        """The solution (length N, new array) of the Newton system for the right-hand
        side ``b = [r_x, r_s, r_e, r_c]``, through K_c (module doc)."""
        xp, nx, m, nw = self.xp, self.nx, self.m, self.nw
        r_x, r_s, r_e, r_c = b[:nx], b[nx:nx + m], b[nx + m:nw], b[nw:]
        sig_e = self._diag_w[nx + m:]
        rc = r_c.copy()
        if self.ne:
            xp.multiply(self._a_e, r_e, out=self._e_tmp)
            self._e_tmp /= sig_e
            rc -= self._e_sum(self._e_tmp, xp.zeros(m))
        t = self._D * rc - self._a_s * r_s / self._den
        rhs = r_x + self._jtmv(t, xp.zeros(nx))
        out = xp.zeros(self.N)
        if nx:
            out[:nx] = self.solver.solve(rhs)
        dx = out[:nx]
        jdx = self._jmv(dx, xp.zeros(m))
        dy = out[nw:]
        xp.multiply(self._D, jdx, out=dy)
        dy -= t
        out[nx:nx + m] = (rc - jdx + self._delta * dy) / self._a_s
        if self.ne:
            out[nx + m:nw] = (r_e - self._a_e * xp.take(dy, self._e_row)) / sig_e
        return out

    def _residual(self, b, v):
        """b - K v with the full Newton matrix (new array)."""
        return b - self._kmv(v, self._kx)

    def _correct(self, r, x) -> None:
        """The refinement's correction of ``x`` for the residual ``r``."""
        x += self._condensed_solve(r)

    def solve(self, rhs_w, rhs_c):
        """(dw, dy); ``last_residual_ratio`` is the final relative residual against the
        full Newton matrix (see :mod:`.refinement`)."""
        nw = self.nw
        b = self._rhs
        b[:nw], b[nw:] = rhs_w, rhs_c
        x = self._condensed_solve(b)
        self.last_residual_ratio, self.last_contraction = refine(
            self.xp, b, x, lambda v: self._residual(b, v), self._correct,
            self.max_refinement_steps, self.residual_ratio_max, regularized=False)
        # x is this solve's own array (a new one from _condensed_solve): views
        return x[:nw], x[nw:]
