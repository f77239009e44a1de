"""The evaluator of a model with opaque calls: exact composition by the chain rule.

With ``z = (x, y)``, the extended problem (:func:`~.calls.extended_model`) gives
``f~(z)``, ``g~(z)``, the arguments ``a(z)`` and all their derivatives; the opaque
functions give ``y = F(a)``, ``D = dy/da`` and ``d^2 (mu^T F) / da^2``.  The user's
problem is ``f(x) = f~(x, y(x))``, ``g(x) = g~(x, y(x))`` with ``y(x)`` the fixed point
of ``y = Phi(x, y) = F(a(x, y))`` (levels, :mod:`.structure`).  Then

    Y = dy/dx = D (A_x + A_y Y)      ((I - D A_y)^{-1} D A_x: log2(levels) doublings)
    grad f = f~_x + Y^T f~_y,      J = G_x + G_y Y

and for ``L = sigma f + lam^T g`` the Hessian of the composition (the Lagrangian of
the lifted problem ``min L~(z) s.t. Phi(z) - y = 0`` reduced to x) is

    mu   = L~_y + (D A_y)^T mu                             (adjoint; L~_y = sigma f~_y + G_y^T lam)
    w    = D^T mu                                          (weights of the argument rows)
    M    = Hess_z(sigma f~ + lam^T g~ + w^T a)  +  A^T blockdiag_c(d^2 (mu_c^T F_c)/da_c^2) A
    H    = Z^T M Z,   Z = [I; Y]

The first term of ``M`` is one call of the extended problem's evaluator with row
weights ``(lam, w)``; the second comes from the opaque functions (one host call per
function for all its instances).  These are IPOPT's derivatives of the same function,
not of a relaxation: the iterates are those of a solver that sees ``f`` and ``g``.

Formats: the public COO of :mod:`caspar_backend.evaluators.base` -- ``(jac_rows,
jac_cols)`` sorted, no duplicates; ``(hess_rows, hess_cols)`` lower triangle, sorted,
no duplicates.  Host NumPy/SciPy only (``device = 'cpu'``).

Per new point ``x``: ``levels + 1`` evaluations of the extended constraints and one
host call of each function per level (values); the first derivative adds one host call
per function (all instances) and the sparse products above; the Hessian one more.
Results are cached for the last point (the solver asks f, g, their derivatives at one
point in turn).
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp

from ..evaluators.base import Evaluator
from ..structure_cache import StructureCache
from . import seeds
from . import structure as S


#: Y = dy/dx at least this dense: the Hessian's Z^T M Z by dense products
DENSE_FRACTION = 0.1


class ComposedEvaluator(Evaluator):
    """Evaluator of ``f(x) = f~(x, y(x))``, ``g(x) = g~(x, y(x))`` (final).

    ``inner``: an evaluator of the extended problem (CPU); ``calls``:
    :class:`~.calls.OpaqueCalls`; ``n``, ``m``: the user's sizes."""

    xp = np
    device = "cpu"

    def __init__(self, problem, inner, calls, n: int, m: int):
        self.problem = problem
        self.inner = inner
        self.calls = calls
        self.n, self.m, self.n_params = n, m, inner.n_params
        self.ny, self.na = calls.n_aux, calls.n_args
        nz = n + self.ny
        ny, na = self.ny, self.na
        for grp in calls.groups:
            grp.fn.prepare(grp.active)
        # the extended Jacobian's blocks as fixed structures: (positions in the COO
        # values, map)
        jr, jc = np.asarray(inner.jac_rows), np.asarray(inner.jac_cols)
        Jz = S.ones(jr, jc, (m + na, nz))
        Ax, Ay = Jz[m:, :n], Jz[m:, n:]
        grow, xcol = jr < m, jc < n

        def block(mask, r0, c0, shape):
            return np.flatnonzero(mask), S.CSRMap(jr[mask] - r0, jc[mask] - c0, shape)

        self._blocks = {"Gx": block(grow & xcol, 0, 0, (m, n)),
                        "Gy": block(grow & ~xcol, 0, n, (m, ny)),
                        "A": block(~grow, m, 0, (na, nz)),
                        "Ax": block(~grow & xcol, m, 0, (na, n)),
                        "Ay": block(~grow & ~xcol, m, n, (na, ny))}
        # D = dy/da, block diagonal, per group its COO in the host function's value order;
        # a group whose arguments read fewer quantities than it has inputs is
        # differentiated along seeds instead (.seeds): its D is never formed
        self._seeds = []
        d_r, d_c, E_seed, H_seed = [], [], None, None
        for grp in calls.groups:
            fn = grp.fn
            rows = grp.out_aux[fn.jac_rows].T.ravel()
            cols = grp.arg_rows[grp.active[fn.jac_cols]].T.ravel()
            sd = seeds.plan(grp, self._blocks["A"][1], S.ones(rows, cols, (ny, na)), nz)
            self._seeds.append(sd)
            if sd is None:
                d_r.append(rows)
                d_c.append(cols)
                continue
            fn.prepare_directions(sd.K)
            e, h = S.pattern_matrix(sd.e_map), S.pattern_matrix(sd.h_map)
            E_seed = e if E_seed is None else E_seed + e
            H_seed = h if H_seed is None else H_seed + h
        self._d_rc = (np.concatenate(d_r) if d_r else np.zeros(0, np.int64),
                      np.concatenate(d_c) if d_c else np.zeros(0, np.int64))
        D = S.ones(*self._d_rc, (ny, na))
        self._dmap = S.CSRMap(*self._d_rc, (ny, na))
        offs = np.concatenate([[0], np.cumsum([g.size for g in calls.groups])]).astype(np.int64)
        lev = S.levels(calls, Ay, offs)
        self.n_levels = int(lev.max()) + 1 if lev.size else 1
        #: (level, group index, instance indices) in evaluation order
        self.schedule = S.schedule(lev, offs)
        Y = S.y_structure(D, Ax, Ay, self.n_levels, E_seed)
        J = S.boolean(Jz[:m, :n] + Jz[:m, n:] @ Y)
        self._jac = S.Pattern.of(J)
        self.jac_rows, self.jac_cols = self._jac.rows, self._jac.cols
        # M = Hess_z(...) + A^T Hb A (+ the seeded groups' blocks), H = Z^T M Z
        hr, hc = np.asarray(inner.hess_rows), np.asarray(inner.hess_cols)
        b_r, b_c = [], []
        for grp, sd in zip(calls.groups, self._seeds):
            if sd is None:
                fn = grp.fn
                act = grp.arg_rows[grp.active]
                b_r.append(act[fn.hess_rows].T.ravel())
                b_c.append(act[fn.hess_cols].T.ravel())
        self._hb_rc = (np.concatenate(b_r) if b_r else np.zeros(0, np.int64),
                       np.concatenate(b_c) if b_c else np.zeros(0, np.int64))
        self._hzmap = S.CSRMap(hr, hc, (nz, nz), symmetric=True)
        self._hbmap = S.CSRMap(*self._hb_rc, (na, na), symmetric=True)
        Hb = S.boolean(self._hbmap.matrix(np.ones(len(self._hb_rc[0]))))
        A = Jz[m:]
        M = self._hzmap.matrix(np.ones(len(hr))) + A.T @ Hb @ A
        M = S.boolean(M if H_seed is None else M + H_seed)
        Z = S.z_map(Y, n)
        self._hess = S.Pattern.of(S.boolean(Z.T @ M @ Z), lower=True)
        self.hess_rows, self.hess_cols = self._hess.rows, self._hess.cols
        self.structure_cache = StructureCache()
        self._clear()

    # ------------------------------------------------------------------ params
    def set_params(self, p) -> None:
        self.inner.set_params(p)
        self.p = self.inner.p
        self._clear()

    def parameters(self) -> np.ndarray:
        return self.inner.parameters()

    def bound(self, p) -> "ComposedEvaluator":
        """A new evaluator for ``p`` sharing the structures and host functions, with its
        own extended evaluator and point cache (for concurrent solves)."""
        ev = copy.copy(self)
        ev.inner = self.inner.bound(p)
        ev.p = ev.inner.p
        ev._clear()
        return ev

    def _bind(self, p):
        if p is not None:
            self.set_params(p)

    def _clear(self) -> None:
        self.p = getattr(self.inner, "p", None)
        self._key = None
        self._z = self._c = self._D = self._Y = self._J = self._gz = None
        self._powers, self._V = [], {}

    # ------------------------------------------------------------- the point
    def _point(self, x):
        """Compute (and cache) ``z = (x, y(x))`` and the extended rows at z."""
        x = np.asarray(x, dtype=float)
        key = x.tobytes()
        if key == self._key:
            return
        n, m = self.n, self.m
        z = np.zeros(n + self.ny)
        z[:n] = x
        c = np.empty(m + self.na)
        groups = self.calls.groups
        level = -1
        with np.errstate(all="ignore"):
            for ell, k, idx in self.schedule:
                if ell != level:   # the arguments of this level read only lower levels
                    self.inner.cons(z, c)
                    level = ell
                grp = groups[k]
                z[n + grp.out_aux[:, idx]] = grp.fn.values(c[m + grp.arg_rows[:, idx]])
            self.inner.cons(z, c)
        self._key, self._z, self._c = key, z, c
        self._D = self._Y = self._J = self._gz = None

    def _first(self):
        """``D``, ``Y``, the extended Jacobian's blocks and gradient at the cached
        point."""
        if self._Y is not None:
            return
        n, m, z, c = self.n, self.m, self._z, self._c
        groups = self.calls.groups
        vals = [grp.fn.jacobian(c[m + grp.arg_rows]).ravel()
                for grp, sd in zip(groups, self._seeds) if sd is None]
        D = self._dmap.matrix(np.concatenate(vals) if vals else np.zeros(0))
        jv = np.asarray(self.inner.jac_values(z), dtype=float)
        J = {k: mp.matrix(jv[idx]) for k, (idx, mp) in self._blocks.items()}
        B, P = D @ J["Ax"], D @ J["Ay"]
        for k, (grp, sd) in enumerate(zip(groups, self._seeds)):
            if sd is not None:    # D_i A_i of these calls directly: E = D A
                V = self._V[k] = sd.seeds(J["A"].data)
                E = sd.first(grp.fn.directional(c[m + grp.arg_rows], V))
                B, P = B + E[:, :n], P + E[:, n:]
        # Y = D A_x + P Y with P = D A_y nilpotent: log2(levels) doublings
        Y, self._powers = S.neumann(B, P, self.n_levels)
        self._D, self._J, self._Y = D, J, sp.csr_matrix(Y)
        self._gz = np.asarray(self.inner.grad(z), dtype=float)

    # ------------------------------------------------------------- evaluation
    def obj(self, x, p=None) -> float:
        self._bind(p)
        self._point(x)
        return float(self.inner.obj(self._z))

    def cons(self, x, out=None, p=None):
        self._bind(p)
        self._point(x)
        if out is None:
            out = np.empty(self.m)
        out[:] = self._c[:self.m]
        return out

    def grad(self, x, out=None, p=None):
        self._bind(p)
        self._point(x)
        self._first()
        n, gz = self.n, self._gz
        g = gz[:n] + self._Y.T @ gz[n:]
        if out is None:
            return g
        out[:] = g
        return out

    def jac_values(self, x, out=None, p=None):
        self._bind(p)
        self._point(x)
        self._first()
        J = self._J["Gx"] + self._J["Gy"] @ self._Y
        v = self._jac.gather(J)
        if out is None:
            return v
        out[:] = v
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        self._bind(p)
        self._point(x)
        self._first()
        n, m, z, c = self.n, self.m, self._z, self._c
        lam = np.asarray(lam, dtype=float)
        sigma = float(obj_factor)
        D, J, Y = self._D, self._J, self._Y
        mu = sigma * self._gz[n:] + (J["Gy"].T @ lam if m else 0.0)
        for Pk in self._powers:  # mu = (I - P^T)^{-1} L~_y, the same doublings
            mu = mu + Pk.T @ mu
        w = D.T @ mu
        groups, seeded = self.calls.groups, self._V
        for k, V in seeded.items():
            grp = groups[k]
            w = w + self._seeds[k].weights(
                grp.fn.vjp(c[m + grp.arg_rows], mu[grp.out_aux]), self.na)
        hv = self.inner.hess_values(z, np.concatenate([lam, w]), sigma)
        M = self._hzmap.matrix(hv)
        hb = [grp.fn.hessian(c[m + grp.arg_rows], mu[grp.out_aux]).ravel()
              for grp, sd in zip(groups, self._seeds) if sd is None]
        if self._hb_rc[0].size:
            Hb = self._hbmap.matrix(np.concatenate(hb))
            A = J["A"]
            M = M + A.T @ (Hb @ A)
        for k, V in seeded.items():    # A_i^T H_i A_i = V_i^T H_i V_i on C_i x C_i
            grp = groups[k]
            M = M + self._seeds[k].second(grp.fn.directional_hessian(
                c[m + grp.arg_rows], V, mu[grp.out_aux]))
        Z = S.z_map(Y, n)
        if Y.nnz >= DENSE_FRACTION * Y.shape[0] * Y.shape[1]:
            # a dense Y (single shooting: every state depends on every earlier control):
            # Z^T (M Z) as dense products, where sparse-sparse ones cost O(n^3) in Python
            # arrays of indices
            Zd = Z.toarray()
            H = Zd.T @ np.asarray(M @ Zd)
        else:
            H = Z.T @ M @ Z
        v = self._hess.gather(H, lower=True)
        if out is None:
            return v
        out[:] = v
        return out

    # ------------------------------------------------------------- diagnostics
    def log_lines(self) -> list[str]:
        """What the solver's log says about the opaque functions (one line each)."""
        lines = self.calls.summary()
        if self.n_levels > 1:
            lines.append(f"Opaque calls in {self.n_levels} levels (calls that read other "
                         "calls' results are evaluated after them)")
        return lines

    def describe_nonfinite(self, x) -> str:
        """The opaque function whose results are not finite at ``x``, else the
        extended problem's own report."""
        self._point(x)
        n, m = self.n, self.m
        for grp in self.calls.groups:
            bad = ~np.isfinite(self._z[n + grp.out_aux])
            if bad.any():
                i = int(np.flatnonzero(bad.any(axis=0))[0])
                args = self._c[m + grp.arg_rows[:, i]]
                why = grp.fn.last_error
                return (f"opaque function {grp.fn.describe()}, call {i}, at arguments "
                        f"{np.array2string(args, precision=6, threshold=8)}"
                        + (f" ({why})" if why else ""))
        describe = getattr(self.inner, "describe_nonfinite", None)
        return describe(self._z) if describe is not None else "no non-finite value found"
