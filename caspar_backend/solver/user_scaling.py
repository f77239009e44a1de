"""IPOPT's ``nlp_scaling_method = 'user-scaling'``: scaling factors the user gives.

For the user problem ``min f(x) s.t. lbg <= g(x) <= ubg, lbx <= x <= ubx`` (n
variables, m constraints) the user gives

* ``obj``: a float, the objective's factor;
* ``x``: a float64 vector (n,), ``dx``, or None (no variable scaling);
* ``g``: a float64 vector (m,), ``dc``, or None (no constraint scaling).

A vector entry that is not positive (0, negative, NaN) means 1.0, as in IPOPT's AMPL
interface (AmplTNLP::get_scaling_parameters).  The solver then iterates on

    min  df f(x~ / dx)   s.t.  dc lbg <= dc g(x~ / dx) <= dc ubg,
                               dx~L <= x~ <= dx~U,

with ``df = obj_scaling_factor * obj``, ``x~ = dx x`` (x0 likewise), the products and
quotients entry by entry; no gradient-based scaling is computed.  The variable bounds
are relaxed by ``bound_relax_factor`` in the user's space and then multiplied by dx
(IPOPT's OrigIpoptNLP: relax_bounds, then apply_vector_scaling_x_LU).  Fixed variables
(``lbx == ubx``, removed from the problem) are not scaled.  The objective and
constraint factors are the slack problem's ``df`` and ``dc``
(:meth:`~.nlp.SlackNLP._compute_scaling`); the variable factors are this module's
:class:`ScaledVariables`, an evaluator of the scaled functions of ``x~``:

    f~(x~)  = f(x),                       x = x~ / dx,
    grad~   = grad f(x) / dx,
    J~_kl   = J_kl / dx_l,                ``(jac_rows, jac_cols)`` COO, unchanged,
    H~_kl   = H_kl / (dx_k dx_l),         ``(hess_rows, hess_cols)`` COO, unchanged,

(``/ dx`` as a product with the reciprocal ``1 / dx``, computed once).  Results go
back to the user's space: ``x = x~ / dx``, the bound multipliers ``lam_x = dx lam_x~
/ df`` (IPOPT's apply_vector_scaling_x_LU of z at the end), the constraint
multipliers ``lam_g = dc y / df`` as for the gradient-based scaling.  The unscaled
dual infeasibility is IPOPT's: ``max(|dx grad_x L~|, |dc_I grad_s L~|) / df`` (the
slack problem's :attr:`~.barrier_nlp.BarrierNLP.dual_unscaling_d`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import OptionError


@dataclass(frozen=True)
class UserScaling:
    """Final.  The user's factors (module doc): ``obj`` a finite nonzero float, ``x`` a
    host float64 vector (n,) of positive finite entries or None, ``g`` likewise (m,)
    or None.  Built by :func:`user_scaling`."""

    obj: float = 1.0
    x: np.ndarray | None = None
    g: np.ndarray | None = None


def _factors(v, size: int, name: str) -> np.ndarray | None:
    """``v`` (None or a vector of ``size`` entries) with every entry that is not
    positive replaced by 1.0; an infinite entry is an error."""
    if v is None:
        return None
    a = np.array(v, dtype=float).reshape(-1)
    if a.shape != (size,):
        raise OptionError(f"user scaling {name}: {a.size} values for {size} entries")
    if np.isposinf(a).any():
        raise OptionError(f"user scaling {name}: an infinite factor")
    with np.errstate(invalid="ignore"):
        return np.where(a > 0.0, a, 1.0)


def user_scaling(value, n: int, m: int) -> UserScaling | None:
    """The :class:`UserScaling` of ``value``: None (none given), a UserScaling, or a
    tuple ``(obj, x, g)`` (module doc; ``x``, ``g`` array-likes or None), checked
    against the problem's ``n`` and ``m``."""
    if value is None:
        return None
    if isinstance(value, UserScaling):
        obj, x, g = value.obj, value.x, value.g
    else:
        try:
            obj, x, g = value
        except (TypeError, ValueError):
            raise OptionError("user_scaling must be (obj, x, g) or a UserScaling, "
                              f"got {value!r}") from None
    obj = 1.0 if obj is None else float(obj)
    if not np.isfinite(obj) or obj == 0.0:
        raise OptionError(f"user scaling of the objective must be finite and nonzero, "
                          f"got {obj!r}")
    return UserScaling(obj, _factors(x, n, "x"), _factors(g, m, "g"))


class ScaledVariables:
    """Final.  The evaluator of ``ev``'s functions in the scaled variables ``x~ = dx
    x`` (module doc): ``dx`` a host float64 vector (n,) of positive factors.  The
    evaluator interface of :mod:`caspar_backend.evaluators.base` on ``ev``'s device,
    with its structures and structure cache; without the optional fused methods, so
    the solver evaluates one function at a time."""

    def __init__(self, ev, dx):
        self.ev = ev
        xp = self.xp = getattr(ev, "xp", np)
        self.device = getattr(ev, "device", "cpu")
        self.structure_cache = getattr(ev, "structure_cache", None)
        self.n, self.m = ev.n, ev.m
        self.jac_rows, self.jac_cols = ev.jac_rows, ev.jac_cols
        self.hess_rows, self.hess_cols = ev.hess_rows, ev.hess_cols
        dx = np.asarray(dx, dtype=float)
        inv = 1.0 / dx
        hr, hc = (np.asarray(a.get() if hasattr(a, "get") else a)
                  for a in (ev.hess_rows, ev.hess_cols))
        jc = np.asarray(ev.jac_cols.get() if hasattr(ev.jac_cols, "get") else ev.jac_cols)
        self._dx = xp.asarray(dx)
        self._inv = xp.asarray(inv)
        self._jfac = xp.asarray(inv[jc])
        self._hfac = xp.asarray(inv[hr] * inv[hc])
        self._x = xp.empty(self.n)

    def unscaled(self, xs, p=None):
        """The user's ``x = x~ / dx`` of ``xs`` (a buffer this object owns, valid until
        the next evaluation); parameters ``p`` bound first when given."""
        if p is not None:
            self.ev.set_params(p)
        return self.xp.divide(xs, self._dx, out=self._x)

    def set_params(self, p) -> None:
        self.ev.set_params(p)

    def obj(self, x, p=None) -> float:
        return self.ev.obj(self.unscaled(x, p))

    def grad(self, x, out=None, p=None):
        res = self.ev.grad(self.unscaled(x, p), out)
        out = res if out is None else out
        out *= self._inv
        return out

    def cons(self, x, out=None, p=None):
        return self.ev.cons(self.unscaled(x, p), out)

    def jac_values(self, x, out=None, p=None):
        res = self.ev.jac_values(self.unscaled(x, p), out)
        out = res if out is None else out
        out *= self._jfac
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        res = self.ev.hess_values(self.unscaled(x, p), lam, obj_factor, out)
        out = res if out is None else out
        out *= self._hfac
        return out

    def describe_nonfinite(self, x) -> str:
        fn = getattr(self.ev, "describe_nonfinite", None)
        return "" if fn is None else fn(self.unscaled(x))
