"""The casadi side of ``nlpsol(..., 'caspar', ...)``: the callback node that runs a solve
and the ``casadi.Function`` returned to the user, both delegating to an
:class:`~caspar_backend.adapters.casadi.frontend.NlpsolCore`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, final

import numpy as np

import casadi as ca

from .interrupts import keyboard_interrupts
from .nlpsol_batch import MapStats, map_request
from .nlpsol_io import NlpsolSignature
from .nlpsol_io import DEFAULT_IN, NLPSOL_IN, NLPSOL_OUT, columns_of, rows_of
from .nlpsol_io import vec as _vec
from .nlpsol_serial import KEY, saved_form

if TYPE_CHECKING:
    from .frontend import NlpsolCore

__all__ = ["DEFAULT_IN", "NLPSOL_IN", "NLPSOL_OUT", "NlpsolFunction", "SolverCallback"]


# ====================================================================== casadi side
@final
class SolverCallback(NlpsolSignature, ca.Callback):
    """The casadi node that runs a solve (final).  Inputs/outputs as casadi's nlpsol
    (without defaults; :class:`NlpsolFunction` adds them)."""

    def __init__(self, name: str, core: "NlpsolCore"):
        ca.Callback.__init__(self)
        self.core = core
        self._derivatives = {}          # keeps derivative callbacks alive (frontend.py doc)
        # the problem and options ride along in an option casadi serializes and otherwise
        # ignores (jit is off), so that a saved Function can be loaded (.casadi_loader)
        self.construct(name, {"jit_options": {KEY: saved_form(core)}})

    def get_sparsity_in(self, i):
        return self.core.sparsity_in(i)

    def get_sparsity_out(self, i):
        return self.core.sparsity_out(i)

    def eval(self, arg):
        out = self.core.solve(*[_vec(a) for a in arg])
        return [ca.DM(self.core.sparsity_out(i), np.atleast_1d(out[k]))
                for i, k in enumerate(NLPSOL_OUT)]

    def get_forward(self, nfwd, name, inames, onames, opts):
        from .sensitivity import ForwardSensitivity

        cb = ForwardSensitivity(name, self.core, nfwd, inames, onames)
        self._derivatives[("fwd", name, nfwd)] = cb
        return cb

    def get_reverse(self, nadj, name, inames, onames, opts):
        from .sensitivity import ReverseSensitivity

        cb = ReverseSensitivity(name, self.core, nadj, inames, onames)
        self._derivatives[("rev", name, nadj)] = cb
        return cb


@final
class NlpsolFunction(ca.Function):
    """What ``nlpsol(..., 'caspar', ...)`` returns (final): a ``casadi.Function`` with
    casadi's nlpsol signature and defaults, plus :meth:`stats`.

    It solves ``size`` instances per evaluation: 1 for the Function nlpsol returns,
    B for ``S.map(B)`` (inputs and outputs widened, :mod:`.nlpsol_io`).  Calls from
    Python (``S(...)``, ``S.call(...)``) are read here first:

    * numeric, one instance: the inputs are checked first, so a bad bound raises
      caspar's ModelError naming the variable or constraint (inside a casadi graph the
      same check raises through casadi, as a RuntimeError carrying the message); plain
      numeric values are then solved directly, without casadi's call machinery, with
      the result casadi's evaluation gives (:mod:`.nlpsol_direct`);
    * numeric, several instances (B columns by casadi's npar rule, or any call of a
      mapped Function): one batched solve, :meth:`NlpsolCore.solve_batch
      <.frontend.NlpsolCore.solve_batch>`, with the result casadi's own evaluation
      gives (same shapes, dict or list as called);
    * symbolic (MX) with B columns: one node of a B-instance Function (one batched
      solve when the graph is evaluated) instead of casadi's B single-solve nodes;
      otherwise casadi's call.

    ``map`` returns a mapped Function of the same kind (:mod:`.nlpsol_batch`), a node
    that solves its B instances in one batched solve, numerically and inside graphs.
    Evaluations that casadi makes itself -- a Function containing ``S`` called with B
    columns, or mapped by casadi -- evaluate ``S`` once per instance, as with any
    casadi Function.
    """

    def __init__(self, wrapper: ca.Function, callback: ca.Callback, core: "NlpsolCore",
                 size: int = 1, sink=None, plain: bool = True):
        ca.Function.__init__(self, wrapper)
        self._callback = callback       # the wrapper calls it: keep it alive
        self._core = core
        self._size = size
        # where the statistics of this Function's evaluations go: the core for the
        # Function nlpsol returns (stats() of the last call), a MapStats for a map
        self._sink = core if sink is None else sink
        # no reduced inputs or outputs: every input and output is widened
        self._plain = plain
        self._identity = None
        self._wider = {}

    def stats(self, mem=0) -> dict:
        """casadi's nlpsol statistics of the last numeric evaluation
        (:mod:`.nlpsol_stats`): for one solve ``return_status``, ``success``,
        ``unified_return_status``, ``iter_count``, ``t_wall_total``, ``t_proc_total``,
        ``n_call_nlp_*``, ``iterations`` (per-iteration lists) and ``caspar`` (message,
        timings, final errors, compile time); after a batched call the last instance's
        status and iterations, the call's times and per-instance lists under
        ``'batch'``.  Before any numeric call: RuntimeError "No stats available", as
        casadi (a mapped Function: ``{}``, as casadi's Map).  A mapped Function keeps
        its own statistics; ``S.stats()`` is not changed by ``S.map(B)``'s calls (as
        casadi)."""
        return self._sink.stats()

    def get_function(self, *name):
        """casadi's ``get_function()``: the names of the NLP's functions as IPOPT's
        nlpsol has them; ``get_function(name)``: that Function (:mod:`.nlpsol_oracle`)."""
        if not name:
            return self._core.oracle_functions.names()
        return self._core.oracle_functions.get(name[0])

    def generate_dependencies(self, *args, **kwargs):
        """casadi's ipopt writes its NLP's functions as C code here, for a solver of the
        compiled library (``nlpsol(name, 'ipopt', './nlp.so')``); caspar's solver runs its
        own compiled problem, which such a library cannot give it: a clear error instead
        of casadi's "not defined for MXFunction"."""
        raise RuntimeError(
            f"nlpsol '{self.name()}' (caspar): generate_dependencies is not available -- "
            "caspar compiles the NLP itself, and a solver built from a compiled C library "
            "('./nlp.so') takes IPOPT; for that code path use casadi.nlpsol(name, 'ipopt', "
            "nlp).generate_dependencies(...)")

    @property
    def problem(self):
        """The compiled :class:`~caspar_backend.problem.Problem`."""
        return self._core.problem

    @property
    def batch_size(self) -> int:
        """Instances solved per evaluation: 1, or B for ``map(B)``."""
        return self._size

    def call(self, arg, *flags):
        """casadi's ``call`` (``arg`` a dict or a list of the inputs; ``flags``
        ``always_inline``, ``never_inline``), read as the class doc says."""
        direct = self._core.direct_calls if self._size == 1 and self._plain else None
        if direct is not None:
            # a plain numeric call: solved here, casadi's result without its call
            # machinery (.nlpsol_direct)
            values = direct.inputs(arg)
            if values is not None:
                self._core.check_inputs(*values[:6])
                out = self._core.solve(*values, record=self._sink.record, checked=True)
                return direct.outputs(out, isinstance(arg, dict))
        wide = self._widen(arg) if self._plain else None
        if wide is not None:
            values, size = wide
            if all(isinstance(v, ca.DM) for v in values):
                out = self._solve_columns(values, size)
            else:
                out = ca.Function.call(self._wider_function(size), values, *flags)
            return dict(zip(NLPSOL_OUT, out)) if isinstance(arg, dict) else out
        if self._size == 1:
            values = self._numeric_inputs(arg)
            if values is not None:
                self._core.check_inputs(*values)
        with keyboard_interrupts():     # Ctrl-C before the solve's handler is in place
            return ca.Function.call(self, arg, *flags)

    def map(self, *args):
        """casadi's ``map`` (every overload): a Function of this kind solving its
        instances in one batched solve (:mod:`.nlpsol_batch`); ``map(1)`` is this
        Function.  Anything caspar does not batch -- options, a map of a map with
        reductions, bad arguments -- is casadi's own ``map``."""
        req = map_request(self, args)
        if req is None or not self._plain:
            return ca.Function.map(self, *args)
        if req.size == 1:
            return self
        return self._core.function(register=True, size=self._size * req.size,
                                   name=req.name, reduce_in=req.reduce_in,
                                   reduce_out=req.reduce_out, sink=MapStats())

    # ------------------------------------------------------------ several instances
    def _widen(self, arg):
        """``(inputs, size)`` for a call that solves ``size`` > 1 instances with
        numeric inputs, or a symbolic call with more instances than this Function's;
        None otherwise (and for calls casadi refuses: it reports them).  ``inputs``: the
        arguments as casadi expands them (npar rule, defaults, scalars, transposed
        vectors), widened to ``size`` instances."""
        if self._size == 1 and not any(_columns(v) > 1 for v in
                                       (arg.values() if isinstance(arg, dict) else arg)):
            return None                  # the common one-instance call: no expansion
        try:
            # an identity Function with this one's inputs and defaults applies casadi's
            # own argument rules; inlined, so a symbolic expansion is plain MX
            out = self._identity_function().call(arg, True, False)
        except (RuntimeError, NotImplementedError, TypeError, ValueError):
            return None
        values = ([out["o_" + nm] for nm in NLPSOL_IN] if isinstance(out, dict)
                  else list(out))
        npar = values[0].size2() // max(self.size2_in(0), 1)
        numeric = all(isinstance(v, ca.DM) for v in values)
        size = self._size * npar
        if size == 1 or (npar == 1 and not numeric):
            return None
        return values, size

    def _identity_function(self) -> ca.Function:
        if self._identity is None:
            ins = [ca.MX.sym(nm, self.sparsity_in(i)) for i, nm in enumerate(NLPSOL_IN)]
            self._identity = ca.Function(self.name(), ins, ins, list(NLPSOL_IN),
                                         ["o_" + nm for nm in NLPSOL_IN],
                                         {"default_in": list(DEFAULT_IN)})
        return self._identity

    def _wider_function(self, size: int) -> "NlpsolFunction":
        """The Function of ``size`` instances that a symbolic call with that many
        becomes one node of; its evaluations record into this Function's stats."""
        if size not in self._wider:
            self._wider[size] = self._core.function(register=True, size=size,
                                                    name=f"{self.name()}_{size}",
                                                    sink=self._sink)
        return self._wider[size]

    def _solve_columns(self, values, size: int) -> list:
        """One batched solve of ``size`` instances from the expanded numeric inputs;
        the outputs as DMs of the widened shapes."""
        core = self._core
        rows = [rows_of(v, core.sparsity_in(i), size) for i, v in enumerate(values)]
        out = core.solve_batch(*rows, record=self._sink.record)
        return [columns_of(out[k], core.sparsity_out(i), size)
                for i, k in enumerate(NLPSOL_OUT)]

    # ------------------------------------------------------------ one instance
    def _numeric_inputs(self, arg):
        """``(x0, p, lbx, ubx, lbg, ubg)`` as vectors when the call is numeric, else
        None (symbolic calls are checked when they are evaluated)."""
        if isinstance(arg, dict):
            given = arg
        elif len(arg) == len(NLPSOL_IN):
            given = dict(zip(NLPSOL_IN, arg))
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


def _columns(v) -> int:
    """The number of columns of a call argument (1 when it has no 2-D shape)."""
    if isinstance(v, (ca.DM, ca.MX, ca.SX)):
        return v.size2()
    try:
        shape = np.shape(v) if not isinstance(v, (str, bytes)) else ()
    except ValueError:
        # a ragged list (of DMs, say): let casadi's argument rules read it
        return 2
    return shape[1] if len(shape) == 2 else 1
