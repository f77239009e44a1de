"""Parametric sensitivities of an NLP solution from the KKT system at the solution.

For the problem solved by ``nlpsol``

    min_x f(x; p)   s.t.   lbg <= g(x; p) <= ubg,   lbx <= x <= ubx

a KKT point ``(x, lam_g, lam_x)`` in CasADi's sign convention satisfies, with
``l(x, p) = f + lam_g^T g``,

    grad_x l + lam_x = 0,        lam_p := -grad_p l          (casadi's lam_p)

and strict complementarity splits every bound into *active* (the multiplier decides the
side: ``lam < 0`` lower, ``lam > 0`` upper) or *inactive* (``lam = 0``).  With the
active set fixed, the solution is a smooth function of ``(p, lbx, ubx, lbg, ubg)``
(Fiacco 1976).  Differentiating the optimality system gives, for a direction
``(dp, dlbx, dubx, dlbg, dubg)``:

* ``dx_B = dlbx_B`` or ``dubx_B`` for the active variable bounds ``B``;
* ``dlam_g_N = 0`` for the inactive constraints ``N``;
* the reduced, symmetric KKT system over the free variables ``I`` and the active
  constraints ``A``::

      [ H_II   J_AI^T ] [ dx_I     ]   [ -(L_xp dp)_I              - H_IB dx_B ]
      [ J_AI   0      ] [ dlam_g_A ] = [ dbound_A - (g_p dp)_A      - J_AB dx_B ]

  with ``H = hess_xx l``, ``J = dg/dx``, ``L_xp = d^2 l / dx dp``, ``g_p = dg/dp``;
* then ``dlam_x = -(H dx + J^T dlam_g + L_xp dp)``,
  ``dlam_p = -(L_xp^T dx + g_p^T dlam_g + L_pp dp)``, ``df = grad_x f . dx +
  grad_p f . dp`` and ``dg = J dx + g_p dp``.

The objective's derivative is taken by the envelope theorem instead,
``df = -lam_p . dp - sum over the active bounds of lam . (that bound's seed)``: equal to
``grad_x f . dx + grad_p f . dp`` where the reduced system is regular, and exact where it
is not (active constraint gradients dependent: the multipliers are not unique, the
optimal value's derivative is).  The reduced system is factorized with ``-delta I`` on
its constraint block and each solve refined against it (:data:`LICQ_REGULARIZATION`).

This is exactly the linear map CasADi's ``Nlpsol::get_forward`` builds (it writes the
same equations as one unsymmetric ``(n + m)`` system); :meth:`KKTSensitivity.reverse`
is its transpose.  The initial guesses ``x0, lam_x0, lam_g0`` have zero sensitivity.

**Active set.**  CasADi's ipopt path takes the sign of the multiplier alone
(``|lam| > min_lam``), so a bound that is inactive but carries IPOPT's tiny interior
multiplier (about ``mu / slack``) is treated as active and that variable is frozen: the
derivative is then wrong unless ``clip_inactive_lam`` is set.  Here a bound is active
only when, in addition, the multiplier is larger than the distance to the bound
(strict complementarity makes one of the two zero at the limit); bounds with
``lb == ub`` are always active.  For well-posed problems both rules agree with finite
differences; on the degenerate ones the derivative does not exist anyway.

Matrices are ``scipy.sparse``; the reduced system is factorized once per point with
SuperLU (the matrix is symmetric indefinite and may have zero pivots in natural order,
which rules out an LDL^T without pivoting such as qdldl).
"""

from __future__ import annotations

from typing import final

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from caspar_backend.errors import EvaluationError


#: the reduced system's constraint block is factorized with -this x max |K| on its
#: diagonal (KKTSensitivity: a singular K from dependent active constraints)
LICQ_REGULARIZATION = 1e-12
#: refinement steps of each solve against K itself
REFINEMENT_STEPS = 3


@final
class KKTSensitivity:
    """The linearized solution map at one KKT point (final).

    Arguments (float64, 0-based, CasADi's sign convention):

    * ``H`` (n, n) symmetric sparse ``hess_xx l``; ``J`` (m, n) sparse ``dg/dx``;
    * ``L_xp`` (n, q) sparse ``d^2 l/dx dp``; ``L_pp`` (q, q) sparse; ``g_p`` (m, q)
      sparse ``dg/dp``; ``grad_fp`` (q,) ``df/dp``;
    * ``x, g, lam_x, lam_g`` the solution and ``lbx, ubx, lbg, ubg`` the bounds it was
      solved with; ``min_lam`` the smallest multiplier magnitude counted as active.

    Direction and adjoint blocks are dense arrays with one column per direction.
    """

    def __init__(self, H, J, L_xp, L_pp, g_p, grad_fp, *, x, g, lam_x, lam_g,
                 lbx, ubx, lbg, ubg, min_lam=0.0):
        self.n, self.m, self.q = H.shape[0], J.shape[0], L_pp.shape[0]
        self.H, self.J = sp.csr_matrix(H), sp.csr_matrix(J)
        self.L_xp, self.L_pp, self.g_p = (sp.csr_matrix(L_xp), sp.csr_matrix(L_pp),
                                          sp.csr_matrix(g_p))
        self.grad_fp = np.asarray(grad_fp, float)
        self.lam_x, self.lam_g = np.asarray(lam_x, float), np.asarray(lam_g, float)
        # casadi's lam_p = -grad_p l at the point
        self.lam_p = -(self.grad_fp + self.g_p.T @ self.lam_g)
        # side of each bound: -1 lower active, +1 upper active, 0 inactive
        self.side_x = active_side(x, lam_x, lbx, ubx, min_lam)
        self.side_g = active_side(g, lam_g, lbg, ubg, min_lam)
        self.I = np.flatnonzero(self.side_x == 0)      # free variables
        self.B = np.flatnonzero(self.side_x != 0)      # variables held at a bound
        self.A = np.flatnonzero(self.side_g != 0)      # active constraints
        H_II = self.H[self.I][:, self.I]
        J_AI = self.J[self.A][:, self.I]
        self.K = sp.bmat([[H_II, J_AI.T], [J_AI, None]], format="csc") \
            if len(self.I) + len(self.A) else None
        self._lu = None
        if self.K is not None:
            # the constraint block regularized by -delta I and the solves refined against
            # K: where the active constraint gradients are linearly dependent (LICQ
            # fails: a bound active where the constraints fix the variable too, as a
            # state bound touched at a collocation point) K is singular but the system
            # consistent -- the multipliers are not unique, x's derivative is -- and an LU
            # of K itself loses dx to the rounding along the null direction (casadi's
            # collocation example: df/dp off by 1e-3); regularized and refined, the
            # regular directions are solved to rounding and the null one stays bounded
            nI = len(self.I)
            scale = float(abs(self.K).max()) if self.K.nnz else 1.0
            reg = np.r_[np.zeros(nI), np.full(len(self.A), -LICQ_REGULARIZATION * scale)]
            try:
                self._lu = spla.splu((self.K + sp.diags(reg)).tocsc())
            except RuntimeError as e:
                raise EvaluationError(
                    "the KKT matrix at the solution is singular (the active constraint "
                    "gradients are linearly dependent or the reduced Hessian is singular): "
                    f"the solution is not differentiable there ({e})") from None

    # ------------------------------------------------------------------ helpers
    def _solve(self, rhs):
        if self._lu is None:
            return np.zeros((0, rhs.shape[1]))
        rhs = np.asarray(rhs, float)
        out = self._lu.solve(rhs)
        for _ in range(REFINEMENT_STEPS):      # against K itself (the regularization's)
            out = out + self._lu.solve(rhs - self.K @ out)
        if not np.all(np.isfinite(out)):
            raise EvaluationError("the KKT matrix at the solution is singular: the "
                                  "solution is not differentiable there")
        return out

    def _pick(self, side, lo, up):
        """Seeds of the active bounds: the lower seed where side == -1, the upper
        where +1 (rows of the active index set only)."""
        idx = np.flatnonzero(side != 0)
        s = side[idx][:, None]
        return np.where(s < 0, lo[idx], up[idx])

    # ------------------------------------------------------------------ forward
    def forward(self, dp, dlbx, dubx, dlbg, dubg) -> dict:
        """Directional derivatives of ``x, f, g, lam_x, lam_g, lam_p`` (shapes (n,k),
        (1,k), (m,k), (n,k), (m,k), (q,k)) for ``k`` directions of the inputs."""
        k = dp.shape[1]
        nI = len(self.I)
        dx = np.zeros((self.n, k))
        dx[self.B] = self._pick(self.side_x, dlbx, dubx)
        Lp = self.L_xp @ dp
        gp = self.g_p @ dp
        rhs_I = -Lp[self.I] - self.H[self.I][:, self.B] @ dx[self.B]
        rhs_A = (self._pick(self.side_g, dlbg, dubg) - gp[self.A]
                 - self.J[self.A][:, self.B] @ dx[self.B])
        u = self._solve(np.vstack([rhs_I, rhs_A]))
        dx[self.I] = u[:nI]
        dlam_g = np.zeros((self.m, k))
        dlam_g[self.A] = u[nI:]
        # df by the envelope theorem: -lam_p dp - lam . (the active bounds' seeds), the
        # derivative of the optimal value, equal to grad_f dx + grad_fp dp where K is
        # regular and exact where it is not (dependent active constraints)
        df = (-(self.lam_p @ dp) - self.lam_x[self.B] @ dx[self.B]
              - self.lam_g[self.A] @ self._pick(self.side_g, dlbg, dubg))
        return {
            "x": dx,
            "f": df.reshape(1, k),
            "g": self.J @ dx + gp,
            "lam_x": -(self.H @ dx + self.J.T @ dlam_g + Lp),
            "lam_g": dlam_g,
            "lam_p": -(self.L_xp.T @ dx + self.g_p.T @ dlam_g + self.L_pp @ dp),
        }

    # ------------------------------------------------------------------ reverse
    def reverse(self, ax, af, ag, alam_x, alam_g, alam_p) -> dict:
        """Adjoints of ``p, lbx, ubx, lbg, ubg`` (shapes (q,k), (n,k), (n,k), (m,k),
        (m,k)) for ``k`` adjoint directions of the outputs: the transpose of
        :meth:`forward`."""
        k = ax.shape[1]
        nI = len(self.I)
        af = af.reshape(1, k)
        # adjoints of (dx, dlam_g, dp) through the output formulas of forward()
        # (f's adjoint through the envelope formula of forward(): to p and the active
        # bounds directly, not through dx)
        bx = ax + self.J.T @ ag - self.H @ alam_x - self.L_xp @ alam_p
        blam = alam_g - self.J @ alam_x - self.g_p @ alam_p
        bp = (-self.lam_p[:, None] * af + self.g_p.T @ ag - self.L_xp.T @ alam_x
              - self.L_pp @ alam_p)
        # through the reduced solve (K is symmetric: K^-T = K^-1)
        v = self._solve(np.vstack([bx[self.I], blam[self.A]]))
        vI, vA = v[:nI], v[nI:]
        bp = bp - self.L_xp[self.I].T @ vI - self.g_p[self.A].T @ vA
        bxB = (bx[self.B] - self.H[self.I][:, self.B].T @ vI - self.J[self.A][:, self.B].T @ vA
               - self.lam_x[self.B][:, None] * af)
        out = {key: np.zeros((size, k)) for key, size in
               (("lbx", self.n), ("ubx", self.n), ("lbg", self.m), ("ubg", self.m))}
        _scatter(out["lbx"], out["ubx"], self.B, self.side_x[self.B], bxB)
        _scatter(out["lbg"], out["ubg"], self.A, self.side_g[self.A],
                 vA - self.lam_g[self.A][:, None] * af)
        out["p"] = bp
        return out


def active_side(v, lam, lb, ub, min_lam=0.0) -> np.ndarray:
    """-1 / 0 / +1 per component: lower bound active, inactive, upper bound active
    (rule in the module docstring).  ``v`` the value of the bounded quantity."""
    v, lam = np.asarray(v, float), np.asarray(lam, float)
    lb, ub = np.asarray(lb, float), np.asarray(ub, float)
    side = np.zeros(v.shape, dtype=np.int8)
    with np.errstate(invalid="ignore"):
        up = (lam > min_lam) & np.isfinite(ub) & (lam > ub - v)
        lo = (lam < -min_lam) & np.isfinite(lb) & (-lam > v - lb)
    side[up] = 1
    side[lo] = -1
    fixed = np.isfinite(lb) & (lb == ub)
    side[fixed] = np.where(lam[fixed] > 0, 1, -1)
    return side


def _scatter(lo, up, idx, side, vals) -> None:
    lo[idx[side < 0]] = vals[side < 0]
    up[idx[side > 0]] = vals[side > 0]


# ====================================================================== casadi side
# The derivative Functions casadi asks a Callback for (get_forward / get_reverse):
#   forward:  (nominal inputs[8], nominal outputs[6], seeds of the inputs[8])  -> [6]
#   reverse:  (nominal inputs[8], nominal outputs[6], seeds of the outputs[6]) -> [8]
# a block with k directions has the sparsity repmat(sp, 1, k): its nonzeros are the k
# directions one after the other.  They are evaluated numerically only; a second
# derivative through the solver (e.g. a Hessian of S's output) is not available.

import casadi as _ca  # noqa: E402  (the maths above does not need casadi)

_N_IN, _N_OUT = 8, 6


def _block(dm, nnz, k) -> np.ndarray:
    """(nnz, k) dense array of the k directions stored in ``dm``."""
    return np.array(dm.nonzeros(), dtype=float).reshape(k, nnz).T


def _dm(sparsity, k, cols) -> "_ca.DM":
    return _ca.DM(_ca.repmat(sparsity, 1, k), np.asarray(cols, float).T.ravel())


class _Sensitivity(_ca.Callback):
    """Abstract: the shared plumbing of the forward and reverse derivative callbacks."""

    #: 'fwd' or 'rev' (what a saved graph records to rebuild the node: .nlpsol_serial)
    KIND = ""

    def __init__(self, name, core, k, inames, onames):
        from .nlpsol_serial import KEY, node_record

        _ca.Callback.__init__(self)
        self.core, self.k = core, k
        self.inames, self.onames = list(inames), list(onames)
        rec = node_record(core, derivative=[self.KIND, k, name, self.inames, self.onames])
        self.construct(name, {"jit_options": {KEY: rec}})

    def get_n_in(self):
        return len(self.inames)

    def get_n_out(self):
        return len(self.onames)

    def get_name_in(self, i):
        return self.inames[i]

    def get_name_out(self, i):
        return self.onames[i]

    def _nominal(self, arg):
        """The KKT sensitivity at the nominal point carried by the inputs."""
        v = [np.array(a.nonzeros(), dtype=float) for a in arg[:_N_IN + _N_OUT]]
        x0, p, lbx, ubx, lbg, ubg = v[:6]
        x, _f, g, lam_x, lam_g, _lam_p = v[_N_IN:_N_IN + _N_OUT]
        return self.core.parametric.sensitivity(x0, p, lbx, ubx, lbg, ubg, x, g, lam_x,
                                               lam_g)

    def _nominal_sparsity(self, i):
        return self.core.sparsity_in(i) if i < _N_IN else self.core.sparsity_out(i - _N_IN)


@final
class ForwardSensitivity(_Sensitivity):
    """Forward derivative of the caspar nlpsol callback for ``k`` directions (final)."""

    KIND = "fwd"

    def get_sparsity_in(self, i):
        if i < _N_IN + _N_OUT:
            return self._nominal_sparsity(i)
        return _ca.repmat(self.core.sparsity_in(i - _N_IN - _N_OUT), 1, self.k)

    def get_sparsity_out(self, i):
        return _ca.repmat(self.core.sparsity_out(i), 1, self.k)

    def eval(self, arg):
        sens = self._nominal(arg)
        c, k = self.core, self.k
        seeds = [_block(arg[_N_IN + _N_OUT + i], c.sparsity_in(i).nnz(), k)
                 for i in range(_N_IN)]
        out = sens.forward(*seeds[1:6])
        return [_dm(c.sparsity_out(j), k, out[name])
                for j, name in enumerate(("x", "f", "g", "lam_x", "lam_g", "lam_p"))]


@final
class ReverseSensitivity(_Sensitivity):
    """Reverse derivative of the caspar nlpsol callback for ``k`` directions (final)."""

    KIND = "rev"

    def get_sparsity_in(self, i):
        if i < _N_IN + _N_OUT:
            return self._nominal_sparsity(i)
        return _ca.repmat(self.core.sparsity_out(i - _N_IN - _N_OUT), 1, self.k)

    def get_sparsity_out(self, i):
        return _ca.repmat(self.core.sparsity_in(i), 1, self.k)

    def eval(self, arg):
        sens = self._nominal(arg)
        c, k = self.core, self.k
        seeds = [_block(arg[_N_IN + _N_OUT + j], c.sparsity_out(j).nnz(), k)
                 for j in range(_N_OUT)]
        adj = sens.reverse(*seeds)
        zero = {"x0": np.zeros((c.n, k)), "lam_x0": np.zeros((c.n, k)),
                "lam_g0": np.zeros((c.m, k))}
        adj.update(zero)
        return [_dm(c.sparsity_in(i), k, adj[name])
                for i, name in enumerate(("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_x0",
                                          "lam_g0"))]
