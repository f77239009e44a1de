"""The casadi side of ``nlpsol(..., 'caspar', ...)``: the callback node that runs a solve
and the ``casadi.Function`` returned to the user, both delegating to an
:class:`~caspar_backend.adapters.casadi.frontend.NlpsolCore`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, final

import numpy as np

import casadi as ca

if TYPE_CHECKING:
    from .frontend import NlpsolCore

#: casadi's nlpsol input and output names, in order
NLPSOL_IN = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_x0", "lam_g0")
NLPSOL_OUT = ("x", "f", "g", "lam_x", "lam_g", "lam_p")
#: casadi.nlpsol_default_in(), in NLPSOL_IN order
DEFAULT_IN = (0.0, 0.0, -math.inf, math.inf, -math.inf, math.inf, 0.0, 0.0)


def _vec(dm) -> np.ndarray:
    return np.array(dm.nonzeros(), dtype=float)


# ====================================================================== casadi side
@final
class SolverCallback(ca.Callback):
    """The casadi node that runs a solve (final).  Inputs/outputs as casadi's nlpsol
    (without defaults; :class:`NlpsolFunction` adds them)."""

    def __init__(self, name: str, core: "NlpsolCore"):
        ca.Callback.__init__(self)
        self.core = core
        self._derivatives = {}          # keeps derivative callbacks alive (frontend.py doc)
        self.construct(name, {})

    def get_n_in(self):
        return len(NLPSOL_IN)

    def get_n_out(self):
        return len(NLPSOL_OUT)

    def get_name_in(self, i):
        return NLPSOL_IN[i]

    def get_name_out(self, i):
        return NLPSOL_OUT[i]

    def get_sparsity_in(self, i):
        return self.core.sparsity_in(i)

    def get_sparsity_out(self, i):
        return self.core.sparsity_out(i)

    def eval(self, arg):
        out = self.core.solve(*[_vec(a) for a in arg])
        return [ca.DM(self.core.sparsity_out(i), np.atleast_1d(out[k]))
                for i, k in enumerate(NLPSOL_OUT)]

    # derivatives use the nominal outputs (the solution): say so
    def uses_output(self):
        return True

    def has_forward(self, nfwd):
        return True

    def get_forward(self, nfwd, name, inames, onames, opts):
        from .sensitivity import ForwardSensitivity

        cb = ForwardSensitivity(name, self.core, nfwd, inames, onames)
        self._derivatives[("fwd", name, nfwd)] = cb
        return cb

    def has_reverse(self, nadj):
        return True

    def get_reverse(self, nadj, name, inames, onames, opts):
        from .sensitivity import ReverseSensitivity

        cb = ReverseSensitivity(name, self.core, nadj, inames, onames)
        self._derivatives[("rev", name, nadj)] = cb
        return cb


@final
class NlpsolFunction(ca.Function):
    """What ``nlpsol(..., 'caspar', ...)`` returns (final): a ``casadi.Function`` with
    casadi's nlpsol signature and defaults, plus :meth:`stats`.  Numeric calls check the
    inputs first, so a bad bound raises caspar's ModelError naming the variable or
    constraint (inside a casadi graph the same check raises through casadi, as a
    RuntimeError carrying the message)."""

    def __init__(self, wrapper: ca.Function, callback: SolverCallback, core: "NlpsolCore"):
        ca.Function.__init__(self, wrapper)
        self._callback = callback       # the wrapper calls it: keep it alive
        self._core = core

    def stats(self, mem=0) -> dict:
        """casadi's nlpsol statistics of the last numeric solve: ``return_status``,
        ``success``, ``unified_return_status``, ``iter_count``, ``t_wall_total``,
        ``t_proc_total``, ``n_call_nlp_*``, ``iterations`` (per-iteration lists) and
        ``caspar`` (message, timings, final errors, compile time).  Before any numeric
        call: RuntimeError "No stats available", as casadi."""
        return self._core.stats()

    @property
    def problem(self):
        """The compiled :class:`~caspar_backend.problem.Problem`."""
        return self._core.problem

    def __call__(self, *args, **kwargs):
        values = self._numeric_inputs(args, kwargs)
        if values is not None:
            self._core.check_inputs(*values)
        return ca.Function.__call__(self, *args, **kwargs)

    def _numeric_inputs(self, args, kwargs):
        """``(x0, p, lbx, ubx, lbg, ubg)`` as vectors when the call is numeric, else
        None (symbolic calls are checked when they are evaluated)."""
        if args and kwargs:
            return None
        if kwargs:
            given = kwargs
        elif len(args) == len(NLPSOL_IN):
            given = dict(zip(NLPSOL_IN, args))
        else:
            return None
        if any(k not in NLPSOL_IN for k in given):
            return None                  # let casadi report the bad name
        out = []
        for i, name in enumerate(NLPSOL_IN[:6]):
            v = given.get(name, DEFAULT_IN[i])
            if isinstance(v, (ca.MX, ca.SX)):
                return None
            try:
                d = ca.DM(v)
            except (NotImplementedError, TypeError, RuntimeError):
                return None
            sp = self._core.sparsity_in(i)
            a = _vec(d)
            if d.numel() == 1 and sp.nnz() != 1:
                a = np.full(sp.nnz(), float(d))
            elif a.size != sp.nnz():
                return None              # casadi reports the dimension mismatch
            out.append(a)
        return out
