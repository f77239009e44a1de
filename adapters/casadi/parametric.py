"""Derivatives with respect to the parameters p of an nlpsol problem: ``lam_p`` and the
KKT sensitivity blocks.

The solve's evaluator binds p as data, so it has no p-derivatives.  :class:`Parametric`
gives

* ``lam_p = -grad_p (f + lam_g^T g)`` at a solution (casadi's ``lam_p`` output, IPOPT's
  convention) through a CasADi Function of that gradient (reverse mode, built on first
  use: what casadi's own nlpsol evaluates for IPOPT), called through its buffer
  (``Function.buffer``: the arguments bound once to arrays of each thread, ~1 us a call
  where building the DM arguments and calling the Function cost ~65 us -- an eighth of a
  small problem's whole ``nlpsol`` call); the DM call where an input is not dense;
* the :class:`~.sensitivity.KKTSensitivity` at a solution: the blocks L_xx, g_x, L_xp,
  L_pp, g_p (cached for the last point: casadi asks for several batches of directions at
  the same point), from the lifted problem over ``z = (x, p)`` (p as variables),
  compiled by caspar on first use.

``lam_p`` does not compile the lifted problem: every solve of a parametric problem
returns it, and compiling it read the whole model a second time (at the end of the
first solve, where it also delayed a Ctrl-C's answer by that much).
"""
from __future__ import annotations

import threading

import casadi as ca
import numpy as np


class Parametric:
    """Final.  ``nlp``: the user's nlp dict (x, p, f, g as casadi expressions); ``n``,
    ``m``: the numbers of variables and constraints; ``min_lam``: casadi's option for the
    sensitivity's active-set decision."""

    def __init__(self, nlp: dict, n: int, m: int, min_lam: float):
        self.nlp, self.n, self.m, self.min_lam = nlp, n, m, min_lam
        self._lifted = None
        self._sens_cache = None
        self._lam_p_fn = None
        self._threads = threading.local()   # per thread: lam_p's bound buffer (or False)

    def evaluator(self):
        """The lifted problem's CPU evaluator (compiled on first use)."""
        if self._lifted is None:
            from .nlp import from_casadi

            p = self.nlp.get("p")
            parts = [ca.vec(self.nlp["x"])] + ([ca.vec(p)] if p is not None and p.nnz() else [])
            d = {"x": ca.vertcat(*parts)}
            for k in ("f", "g"):
                if self.nlp.get(k) is not None:
                    d[k] = self.nlp[k]
            self._lifted = from_casadi(d, expand=True)
        return self._lifted.evaluator()

    def _gradient_p(self):
        """The CasADi Function ``(x, p, lam_g) -> grad_p (f + lam_g^T g)``, every
        argument and the result a column vector (x, p, g read column-major)."""
        if self._lam_p_fn is None:
            nlp = self.nlp
            x, p = nlp["x"], nlp["p"]
            sym = type(x).sym
            f = nlp.get("f")
            g = nlp.get("g")
            lam = sym("lam_g", self.m)
            lag = (f if f is not None else 0) + (ca.dot(lam, ca.vec(g)) if self.m else 0)
            gp = ca.gradient(lag, p) if hasattr(lag, "sparsity") else ca.DM.zeros(p.shape)
            self._lam_p_fn = ca.Function("caspar_lam_p", [x, p, lam],
                                         [ca.densify(ca.vec(gp))])
        return self._lam_p_fn

    def _bound(self):
        """This thread's ``(buffer, trigger, X, P, G, out)``: the gradient Function's
        buffer with its arguments and result bound to these arrays (their values the
        nonzeros column by column); False where an argument is not dense (a buffer takes
        nonzeros only)."""
        got = getattr(self._threads, "bound", None)
        if got is None:
            fn = self._gradient_p()
            if all(fn.sparsity_in(i).is_dense() for i in range(3)) and \
                    fn.sparsity_out(0).is_dense():
                arrays = [np.zeros(fn.nnz_in(i)) for i in range(3)] + [np.zeros(fn.nnz_out(0))]
                buf, trigger = fn.buffer()
                for i in range(3):
                    buf.set_arg(i, memoryview(arrays[i]))
                buf.set_res(0, memoryview(arrays[3]))
                got = (buf, trigger, *arrays)
            else:
                got = False
            self._threads.bound = got
        return got

    def prepare_lam_p(self) -> None:
        """Build :meth:`lam_p`'s Function now (a solve does before its first iteration)."""
        self._gradient_p()

    def lam_p(self, x, p, lam_g) -> np.ndarray:
        """``-grad_p (f + lam_g^T g)`` at ``(x, p)``, (n_p,)."""
        bound = self._bound()
        if bound:
            _, trigger, X, P, G, out = bound
            X[:] = np.asarray(x, float).reshape(-1)
            P[:] = np.asarray(p, float).reshape(-1)
            if self.m:
                G[:] = np.asarray(lam_g, float).reshape(-1)
            trigger()
            return -out
        nlp = self.nlp
        fn = self._gradient_p()
        xs, ps = nlp["x"].shape, nlp["p"].shape
        X = ca.reshape(ca.DM(np.asarray(x, float)), *xs)
        P = ca.reshape(ca.DM(np.asarray(p, float)), *ps)
        G = ca.DM(np.asarray(lam_g, float).reshape(-1, 1)) if self.m else ca.DM(0, 1)
        return -np.asarray(fn(X, P, G), float).reshape(-1)

    def sensitivity(self, x0, p, lbx, ubx, lbg, ubg, x, g, lam_x, lam_g):
        """The :class:`~.sensitivity.KKTSensitivity` at a solution (module docstring)."""
        from .sensitivity import KKTSensitivity

        key = tuple(np.asarray(a, float).tobytes() for a in (p, lbx, ubx, lbg, ubg, x, lam_x,
                                                               lam_g))
        if self._sens_cache is not None and self._sens_cache[0] == key:
            return self._sens_cache[1]
        n = self.n
        ev = self.evaluator()
        z = np.concatenate([x, p])
        Hz = ev.hess(z, lam_g if self.m else np.zeros(0), 1.0).tocsr()
        Jz = ev.jac(z).tocsr()
        gz = np.asarray(ev.grad(z), float)
        sens = KKTSensitivity(Hz[:n, :n], Jz[:, :n], Hz[:n, n:], Hz[n:, n:],
                              Jz[:, n:], gz[n:], x=x, g=g, lam_x=lam_x, lam_g=lam_g,
                              lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg, min_lam=self.min_lam)
        self._sens_cache = (key, sens)
        return sens
