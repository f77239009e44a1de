"""The full augmented KKT system, optionally with a low-rank Hessian term.

Matrix (symmetric, size ``N = nw + m + r``)::

    K = [ W + Sigma + delta_w I      A^T          Q   ]
        [ A                       -delta_c I      0   ]
        [ Q^T                        0           -C   ]

``W``: lower-triangle COO ``(hess_rows, hess_cols)`` in w-space, duplicates summed;
``A``: COO ``(jac_rows, jac_cols)``, shape ``(m, nw)``, no duplicates; ``Sigma``: dense
diagonal, length ``nw``; ``Q``: dense ``(nw, r)`` and ``C = diag(c)`` with ``c_k = +-1``:
the low-rank block used by L-BFGS.  Eliminating the last block row gives
``W + Q C Q^T + Sigma + delta_w I`` in the top-left block, so with ``r > 0`` this matrix
represents the system with Hessian ``W + Q C Q^T`` exactly (no Sherman-Morrison step), and
by Haynsworth's inertia additivity
``In(K) = In(K_reduced) + In(-C)``: the required inertia is
``(nw + #{c_k < 0}, m + #{c_k > 0}, 0)``.

``static_regularization = eps`` adds ``ew_j`` to the first block's diagonal (while
``delta_w = 0``) and ``-max(eps_i - delta_c, 0)`` to row i of the second's, with

    ew_j  = eps min(1, |K_j|_2),   |K_j|_2^2 = sum_k W_jk^2 + Sigma_j^2 + sum_i A_ij^2

(column j of K's first block row; ``ew_j = eps`` for every column while a low-rank block is
present) and

    eps_i = min( f eps min(1, |A_i|_2^2),  kappa p_i ),
    p_i   = sum over the private columns j of row i of  A_ij^2 / (Sigma_j + delta_w),

(``f`` the linear solver's ``row_static_factor``: 1, or 1e-4 for cuDSS's Bunch-Kaufman
factorization, which needs no term to survive tiny constraint pivots;
``A_i`` the Jacobian's row i; a column is *private* to row i when it has no other
Jacobian entry and no Hessian entry: a slack, or the elastic columns of the restoration
phase; the one column of a *singleton* row counts as private to it as well; ``p_i =
+inf`` for a row without one; ``kappa`` = ``PRIVATE_PIVOT_FRACTION``; the second bound
applies while ``delta_c = 0``), in the *factorized* matrix only; iterative
refinement uses K itself, so the solution is K's wherever K is nonsingular and refinement
converges.  The column scale keeps the term relative on a badly scaled variable:
refinement removes a term e from a pivot d only at the rate e / (d + e) per step, so an
absolute eps = 1e-9 on hs054's x6 (K's pivot 3.4e-18, entries of that size only) left
its Newton step at 0.5 against 5.6e7 while the residual test, dominated by the O(1)
rows, passed.  Both bounds keep the perturbation of a constraint pivot relative.  A
constraint pivot is ~ ``|A_i|^2 / h``: a uniform eps dominates the pivots of rows with
small coefficients.  Eliminating a private column first (it has one neighbour, so a
fill-reducing order does) makes row i's pivot at most ``-p_i``: that row needs no static
term, and when the slack of an active inequality sits at its bound (``Sigma_j ~ 1e12``,
``p_i ~ 1e-12``) an eps above ``p_i`` would replace the row's true pivot, so that the step
stops satisfying the linearized row and refinement against K cannot recover it
(case9241_pegase stalled at a primal infeasibility of 6e-6 this way).  A singleton
row ``x_j = b`` (an initial condition written as a constraint) has one neighbour too, so
a fill-reducing order eliminates the row first and its pivot is the static term itself;
when x_j's bound is active (``b`` on it, the bound relaxed by 1e-8: ``Sigma_j`` grows to
~1e12) the true pivot is ``-A_ij^2 / Sigma_j`` and an eps above it left the row
unsatisfied by ~1e-8 at every step (Pyomo's lqcp example: the primal infeasibility stuck
at 1e-8, the objective 7e-5 from IPOPT's); bounding it by ``kappa p_i`` keeps the element
growth at ``Sigma_j / kappa``.  When
refinement fails anyway, :meth:`AugmentedKKT.decrease_static_regularization` and then
:meth:`AugmentedKKT.increase_quality` (IPOPT's ``IncreaseQuality``) change eps.

**Eliminated columns** (``eliminated_pivots=True``; :mod:`.elastic`): the owner has
eliminated further private columns of every row, each with a single entry ``+-1`` in
its row, and writes ``d_i = sum over them of 1 / (Sigma_j + delta_w)`` into
:attr:`AugmentedKKT.eliminated_pivots` before :meth:`~AugmentedKKT.build`.  Row i's
diagonal is then ``-(delta_c + e_i) - d_i``: the Schur complement of those columns, as a
fill-reducing order of the full matrix would form it.  Their entries count in the
static term as they would there: ``|A_i|_2^2 >= 1`` (so ``eps_i = eps``) and ``p_i``
includes ``d_i`` (finite on every row; the pattern counts no singleton rows).

The linear solver receives the **upper triangle in CSC**, 0-based int64 indices; entry
``(i, j)`` of the lower triangle of K is stored as ``(j, i)``.  Every diagonal entry is
present.  The map from the concatenated source vector

    src = [hess_values (nnz_h), Sigma+delta_w (nw), jac_values (nnz_j), -delta_c (m),
           Q column-major (nw*r), -c (r)]

to CSC positions (``_map``, int64, length ``len(src)``) is computed once on the host,
with everything else that depends on the structure alone, as an
:class:`~.pattern.AugmentedPattern` (which the solves of a compiled problem share);
``build()`` sums duplicates with a fixed-order segment sum
(:class:`~caspar_backend.arrays.SegmentSum`: bincount's order on the host, the
deterministic ``kernels/segment_sum.cu`` on the device) into the preallocated
``values`` (float64, length ``nnz``).

Array module: ``xp`` (numpy or cupy).  ``src``, ``values``, ``sigma``, the right-hand
side and the refinement buffers live in ``xp`` and are allocated once; only the
structure (``SparseStructure``, host int64) and ``lowrank_c`` (host, length ``r``: the
inertia count needs it on the host) stay on the host.  One iteration's ``build`` /
``solve`` allocate nothing of size ``nnz``.
"""

from __future__ import annotations

import math

import numpy as np

from ..arrays import fused, scalars
from .base import KKTSystem
from .pattern import AugmentedPattern
from .refinement import FirstTest


class AugmentedKKT(KKTSystem):
    """Final."""

    name = "augmented"

    #: largest static regularization :meth:`increase_quality` goes to
    STATIC_REGULARIZATION_MAX = 1e-6
    #: smallest static regularization :meth:`decrease_static_regularization` goes to,
    #: and its step
    STATIC_REGULARIZATION_MIN = 1e-14
    STATIC_REGULARIZATION_DECREASE = 1e3
    #: ``kappa``: a row's static term is at most this fraction of the part of its pivot
    #: that its private columns give (module doc), so refinement against K contracts by
    #: about this factor per step on that row
    PRIVATE_PIVOT_FRACTION = 1e-2

    def __init__(self, nw, m, hess_rows, hess_cols, jac_rows, jac_cols, linear_solver,
                 n_lowrank=0, xp=np, max_refinement_steps=10, residual_ratio_max=1e-10,
                 static_regularization=0.0, pattern: AugmentedPattern | None = None,
                 symbolic=None, sigma=None, eliminated_pivots=False):
        """``pattern``: the :class:`~.pattern.AugmentedPattern` of these arguments when
        the caller has it (a cached one), else built here; ``symbolic``: the linear
        solver's shared analysis of its structure (``linear_solver.symbolic``), or
        None; ``sigma``: the buffer (length nw) the method writes Sigma into, when the
        owner keeps it (a view of its own), else allocated here; ``eliminated_pivots``:
        rows with eliminated columns (module doc)."""
        self.xp = xp
        self.nw, self.m, self.r = int(nw), int(m), int(n_lowrank)
        nw, m, r = self.nw, self.m, self.r
        if pattern is None:
            pattern = AugmentedPattern(nw, m, hess_rows, hess_cols, jac_rows, jac_cols, r, xp)
        self.pattern = pt = pattern
        self.N = pt.N
        self._map = pt.map
        self.structure = pt.structure
        self.nnz = pt.nnz
        self._off = pt.off
        self._assemble = pt.assemble
        self._src = xp.zeros(int(self._off[-1]))
        o = self._off
        # views into src: the method writes its values here directly
        self.hess_values = self._src[o[0]:o[1]]
        self._diag_w = self._src[o[1]:o[2]]
        self.jac_values = self._src[o[2]:o[3]]
        self._diag_c = self._src[o[3]:o[4]]
        self.lowrank_Q = self._src[o[4]:o[5]].reshape(r, nw).T   # (nw, r) view
        self._diag_r = self._src[o[5]:o[6]]
        self.lowrank_c = -np.ones(r)
        self.sigma = xp.zeros(nw) if sigma is None else sigma
        #: ``d`` of the module doc's eliminated columns (length m, written by the owner
        #: before build), or None without them
        self.eliminated_pivots = xp.zeros(m) if eliminated_pivots else None
        self.values = xp.zeros(self.nnz)
        self.solver = linear_solver
        self.solver.analyse(self.structure, symbolic)
        self.max_refinement_steps = max_refinement_steps
        self.residual_ratio_max = residual_ratio_max
        self._rhs = xp.zeros(self.N)
        self._rhs_mv = xp.zeros(self.N)     # primal_matvec's input
        self._kv = xp.zeros(self.N)         # K v of the refinement and primal_matvec
        # static pivot regularization: factorize K + diag(eps I, -eps I, 0) but refine
        # against K, so a solver without pivoting survives zero pivots of a nonsingular K
        # while the computed step is K's (to the refinement tolerance)
        self.static_regularization = float(static_regularization)
        self._eps_unpivoted = None   # the static term when a leavable mode switched on
        # the constraint block's static term per row: eps min(1, |A_i|^2) (module doc)
        self._row_sq = pt.row_sq
        self._ec = xp.zeros(m)
        self._dstat = xp.zeros(self.N)    # diag(ew_j, -eps_i, 0): set by build()
        # the first block's static term per column: eps min(1, |K_j|_2) (module doc); the
        # squares of W's entries go to both their row and column, off the diagonal.  The
        # squares [W^2, W_off^2, A^2, Sigma^2] share one buffer; A^2 (``_jsq``) also
        # serves the rows' term
        nh, noff, nj = pt.nnz_h, pt.n_off, pt.nnz_j
        self._hoff = pt.hoff
        self._col_sq = pt.col_sq
        self._csq = xp.zeros(nh + noff + nj + nw)
        self._jsq = self._csq[nh + noff:nh + noff + nj]
        self._ew = xp.zeros(nw)
        # private columns (the pattern's), with per-build gathers into these buffers
        self._priv_entry, self._priv_col = pt.priv_entry, pt.priv_col
        self._priv_row_sum = pt.priv_row_sum
        self._priv_v = xp.zeros(pt.n_priv)
        self._priv = xp.zeros(m)
        # +inf on rows without a private column: their bound is min(., +inf)
        self._priv_none = pt.priv_none

    # ------------------------------------------------------------------ values
    def build(self) -> None:
        # the static term stands in for a missing Hessian perturbation: once delta_w is
        # on, the first block is factorized exactly as the method asked.  Constraint row
        # i always carries at least -eps_i: delta_c = 1e-8 mu^0.25 is ~1e-10 late in a
        # solve, and constraint pivots that small make the factors of a non-pivoting
        # LDL^T grow without bound; refinement against K removes the excess.
        xp = self.xp
        eps = self.static_regularization
        wrote_jsq = self._primal_static_term(eps if self.delta_w == 0.0 else 0.0)
        elim = self.eliminated_pivots
        if eps != 0.0 and not wrote_jsq and elim is None:   # A^2, which the row term reads
            xp.multiply(self.jac_values, self.jac_values, out=self._jsq)
        ec = self._ec
        dstat_c = self._dstat[self.nw:self.nw + self.m]
        if eps == 0.0:              # no static term (pivoting factorization, or off)
            ec.fill(0.0)
            ec -= self.delta_c
            xp.maximum(ec, 0.0, out=ec)
            xp.multiply(ec, -1.0, out=dstat_c)
            xp.multiply(ec, -1.0, out=self._diag_c)
            self._diag_c -= self.delta_c
        else:
            if elim is None:
                self._row_sq(self._jsq, ec)
            else:
                ec.fill(1.0)    # the eliminated entries alone give |A_i|^2 >= 1
            # the slack-pivot bound only while the constraint block is not perturbed
            # itself: with delta_c > 0 (a degenerate Jacobian) the full term keeps a
            # singular K visible as a zero pivot, so that a rank-deficient Jacobian
            # without curvature reaches the pivoting factorization as with IPOPT's
            # pivoting solvers (docs/kkt-regularization-and-refinement.md)
            priv_on = self.delta_c == 0.0
            priv = self._private_pivots() if priv_on else self._priv   # (not read when off)
            # ec <- max(min(eps min(ec, 1), kappa p) - delta_c, 0), and the diagonals
            fused.call(xp, "row_static_term", priv, eps * self.solver.row_static_factor,
                       self.delta_c, 1.0 if priv_on else 0.0, ec, dstat_c, self._diag_c)
        if elim is not None:
            self._diag_c -= elim        # the eliminated columns' Schur complement
        if self.r:
            self._diag_r[:] = self.xp.asarray(-self.lowrank_c)
        self._assemble(self._src, self.values)

    def _primal_static_term(self, eps):
        """``ew_j = eps min(1, |K_j|_2)`` of the module doc (the scalar ``eps`` itself
        when it is 0 or a low-rank block couples every column) into the first block of
        ``_dstat``, and ``(Sigma + delta_w) + ew`` into the diagonal of the first block
        row.  Returns whether it wrote the Jacobian's squares into ``_jsq`` as well (with
        its other squares, in one launch)."""
        if eps == 0.0 or self.r:
            return self._uniform_primal_static_term(eps)
        xp, q = self.xp, self._csq
        # [W^2, W_off^2, A^2, Sigma^2]
        fused.call(xp, "kkt_squares", self.hess_values, self._hoff, self.jac_values,
                   self.sigma, float(self._off[1]), float(len(self._hoff)),
                   float(len(self._jsq)), q)
        ew = self._ew
        self._col_sq(q, ew)         # |K_j|_2^2, finished by the op
        fused.call(xp, "col_static_term", self.sigma, self.delta_w, eps, ew,
                   self._dstat[:self.nw], self._diag_w)
        return True

    def _uniform_primal_static_term(self, eps):
        """:meth:`_primal_static_term` with ``ew_j = eps`` for every column; writes no
        squares (False)."""
        self._dstat[:self.nw] = eps
        # (sigma + delta_w) + ew, in place: the association of the original expression
        self.xp.add(self.sigma, self.delta_w, out=self._diag_w)
        self._diag_w += eps
        return False

    def _private_pivots(self):
        """``kappa p_i`` of the module doc (``+inf`` where row i has no private column),
        in a preallocated buffer."""
        xp, v = self.xp, self._priv_v
        # A_ij^2 / max(Sigma_j + delta_w, 1e-30): a slack of a row with no finite bound
        # has Sigma = 0, its pivot term is unbounded; the floor keeps the ratio finite (a
        # bound of >= 1e30 A_ij^2 is no bound at all)
        fused.call(xp, "private_ratio", self.jac_values, self._priv_entry, self.sigma,
                   self._priv_col, self.delta_w, v)
        self._priv_row_sum(v, self._priv)
        if self.eliminated_pivots is not None:
            # every row has its eliminated columns: kappa (p_i + d_i)
            self._priv += self.eliminated_pivots
            self._priv *= self.PRIVATE_PIVOT_FRACTION
            return self._priv
        # kappa p_i, and +inf on the rows without a private column
        fused.call(xp, "scale_add", self.PRIVATE_PIVOT_FRACTION, self._priv_none, self._priv)
        return self._priv

    def increase_quality(self) -> bool:
        """Make the next factorizations more stable, as IPOPT asks its linear solver when
        iterative refinement fails (IpPDFullSpaceSolver: ``IncreaseQuality``, e.g. a
        larger pivot tolerance in MA27/MA57).  A factorization without pivoting has no
        pivot tolerance; its counterpart is the static regularization eps: LDL^T of a
        saddle-point matrix whose constraint pivots are ~-eps can have factors growing
        like 1/eps (case197_snem: |D| up to 4e13 with eps = 1e-9, refinement diverging),
        while a larger eps bounds the growth and refinement against K still returns K's
        solution.  eps grows tenfold per call, for the rest of the solve (IPOPT keeps
        an increased pivot tolerance too), up to ``STATIC_REGULARIZATION_MAX``, kept
        below the smallest eigenvalues that matter so that the inertia of the factorized
        matrix stays K's.  Returns False when it cannot increase any more.

        A linear solver that perturbs tiny pivots silently (cuDSS without Bunch-Kaufman)
        is first asked for its exact mode (:meth:`enable_pivoting`: the dense
        eigendecomposition of a small system): there the failed refinement is the only
        sign of a pivot it replaced, and no static term brings that pivot back."""
        if self.solver.perturbs_pivots and self.enable_pivoting():
            return True
        eps = self.static_regularization
        if eps <= 0.0 or eps >= self.STATIC_REGULARIZATION_MAX:
            return False
        self.static_regularization = min(10.0 * eps, self.STATIC_REGULARIZATION_MAX)
        return True

    def decrease_static_regularization(self) -> float | None:
        """Divide the static regularization by ``STATIC_REGULARIZATION_DECREASE`` (not
        below ``STATIC_REGULARIZATION_MIN``) and return the previous value, or ``None``
        when it is off or at the floor.  Refinement against K converges only when
        ``eps ||(K + E)^{-1}||`` is small: where K's smallest eigenvalues lie below eps
        (an OCP with 10^6 intervals, dt = 1e-5: entries O(dt) in the control rows and
        the Hessian) a *smaller* eps is what makes the solve accurate again, where a
        larger one (:meth:`increase_quality`) only moves the factorized matrix further
        from K."""
        eps = self.static_regularization
        if eps <= self.STATIC_REGULARIZATION_MIN:
            return None
        self.static_regularization = max(eps / self.STATIC_REGULARIZATION_DECREASE,
                                         self.STATIC_REGULARIZATION_MIN)
        return eps

    def enable_pivoting(self) -> bool:
        """Factorize with the linear solver's pivoting mode from now on, where it has one
        (small systems: qdldl's dense Bunch-Kaufman, cuDSS's switch to the dense eigendecomposition
        on the device), for a pivot that a fixed elimination order loses to cancellation
        or static pivoting replaces (see the inertia correction).  A
        pivoting factorization needs no static term, so K itself is factorized from
        then on, as IPOPT's does (until :meth:`leave_pivoting`, where the solver's mode
        is one it leaves).  Returns False when no such mode is available or it is
        already on."""
        if not self.solver.enable_pivoting():
            return False
        self._eps_unpivoted = self.static_regularization
        self.static_regularization = 0.0
        return True

    def leave_pivoting(self) -> bool:
        """Back to the unpivoted factorization and the static term it had, where the
        linear solver leaves its pivoting mode (qdldl's dense one: the inertia
        correction calls this as an iteration begins, so a pivoting factorization
        serves only the iterations whose unpivoted one fails)."""
        if self._eps_unpivoted is None or not self.solver.leave_pivoting():
            return False
        self.static_regularization, self._eps_unpivoted = self._eps_unpivoted, None
        return True

    def factorize_accurate(self) -> bool:
        """K = the factorized matrix minus the static term (``_dstat``), factorized by the
        linear solver's accurate mode for this factorization's solves (qdldl: SuperLU);
        the solves still refine against K.  ``_dstat`` goes as it is: a solver without
        such a mode (cuDSS) returns False before reading it, so nothing leaves the
        device."""
        return self.solver.factorize_accurate(self._dstat)

    def constraint_block_negative(self) -> bool:
        """Whether every constraint row's diagonal of the factorized matrix is negative
        (no low-rank block): then its inertia has at least m negative eigenvalues."""
        return self.r == 0 and self.m > 0 and bool((self._diag_c < 0.0).all())

    def expected_inertia(self):
        neg_c = int(np.count_nonzero(self.lowrank_c < 0))
        return (self.nw + neg_c, self.m + (self.r - neg_c), 0)

    def factorize(self):
        fact = self.solver.factorize(self.values)
        ok = fact.ok and (not self.check_inertia or fact.inertia == self.expected_inertia())
        return fact, ok

    def primal_matvec(self, v):
        """``(W + Sigma + delta_w I) v`` (length nw, new array) for the matrix of the last
        :meth:`factorize`: its first block row applied to ``[v, 0]`` without the static
        term (no low-rank block)."""
        u = self._rhs_mv
        u[:self.nw] = v
        u[self.nw:] = 0.0
        kv = self.solver.matvec(u, self._kv)
        return kv[:self.nw] - self._dstat[:self.nw] * v

    # ------------------------------------------------------------------ solve
    def solve(self, rhs_w, rhs_c):
        """(dw, dy); ``last_residual_ratio`` is the final relative residual against K
        (large when K is singular and only the static regularization made it solvable)."""
        x, first = self._solve(rhs_w, rhs_c)
        if first is None:
            self.last_residual_ratio, self.last_contraction = 0.0, 0.0
        else:
            self.last_residual_ratio, self.last_contraction = first.finish(
                scalars(self.xp, *first.columns))
        return x[:self.nw], x[self.nw:self.nw + self.m]

    def solve_deferred(self, rhs_w, rhs_c):
        """:meth:`solve` up to the refinement's first test, its norms not read:
        ``(dw, dy, first)``, ``first`` a :class:`~.refinement.FirstTest` (None without
        refinement) whose norms the caller reads with its own and then ends through
        :meth:`settle_refinement`; until then the ratio and contraction are NaN."""
        x, first = self._solve(rhs_w, rhs_c)
        self.last_residual_ratio = self.last_contraction = 0.0 if first is None else math.nan
        return x[:self.nw], x[self.nw:self.nw + self.m], first

    def settle_refinement(self, first, values) -> bool:
        """End a :meth:`solve_deferred`'s refinement from its first test's norms as read
        (``values``): True where that test passes (``dw``, ``dy`` stand), else the
        refinement goes on as :meth:`solve`'s would (``dw``, ``dy`` refined in place) and
        False."""
        ratio = first.passes(values)
        if ratio is not None:
            self.last_residual_ratio, self.last_contraction = ratio, 0.0
            return True
        self.last_residual_ratio, self.last_contraction = first.finish(values)
        return False

    def _solve(self, rhs_w, rhs_c):
        """The solve's array (a new one) and its refinement up to the first test."""
        nw, m, xp = self.nw, self.m, self.xp
        b = self._rhs
        fused.call(xp, "concat_rhs", rhs_w, rhs_c, float(nw), float(m), b)   # [w, c, 0]
        x = self.solver.solve(b)
        # iterative refinement on the full system (:mod:`.refinement`): QDLDL does not
        # pivot and cuDSS pivots only statically, so tiny pivots can cost accuracy that
        # a few residual corrections recover; the static term is not part of K
        first = None if not self.max_refinement_steps else FirstTest(
            xp, b, x,
            lambda v: fused.call(xp, "residual_static", b, self.solver.matvec(v, self._kv),
                                 self._dstat, v),
            self.solver.solve_add, self.max_refinement_steps, self.residual_ratio_max,
            regularized=self.static_regularization > 0)
        # x is this solve's own array (the solver returns a new one): views, not copies
        return x, first
