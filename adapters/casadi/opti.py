"""``Opti``: ``casadi.Opti`` with ``solver('caspar', ...)``.

    from caspar_backend.casadi import Opti
    opti = Opti()
    x = opti.variable(2); p = opti.parameter()
    opti.minimize((x[0] - p) ** 2 + x[1] ** 2)
    c = x[0] + x[1] >= 1
    opti.subject_to(c)
    opti.set_value(p, 0.2)
    opti.solver("caspar", {"print_time": False}, {"print_level": 0})
    sol = opti.solve()
    sol.value(x), opti.value(x), sol.value(opti.dual(c)), opti.stats()["return_status"]

**How.**  casadi creates Opti's solver with ``nlpsol("solver", name, nlp, opts)`` inside
C++, and its plugin loader only finds compiled plugins, so ``solver('caspar')`` cannot be
routed through casadi's ``Opti.solve``.  This subclass therefore intercepts
``solver('caspar', plugin_opts, solver_opts)`` and, at ``solve()``, does what
``OptiNode::solve`` does with public ``OptiAdvanced`` calls on the *same* problem node
(``casadi.OptiAdvanced(opti)`` shares it; ``opti.advanced`` would be a copy):

1. ``bake()`` when the problem changed; the nlp is ``opti.x, opti.p, opti.f, opti.g``
   (the baked, scaled problem casadi would hand to ``nlpsol``); it is compiled by
   :func:`~.frontend.nlpsol` only when the problem or the options changed, so
   ``set_value``/``set_initial`` re-solves do not recompile;
2. ``solve_prepare()`` and ``arg()``: initial guess, parameter values, lbg/ubg evaluated
   for the current parameters, initial duals;
3. the caspar solve, then ``res(...)``: casadi stores the solution exactly as after its
   own solve, so ``opti.value``, ``opti.dual``, ``opti.debug.value`` and duals work
   unchanged; on failure it raises casadi's "Solver failed..." message after storing
   the last iterate, as casadi does (``solve_limited`` accepts iteration/time limits).

What differs from casadi (honestly):

* ``solve()`` returns :class:`OptiSol`, a Python object with ``value``,
  ``value_variables``, ``value_parameters``, ``stats`` and ``opti``; it is not an
  instance of ``casadi.OptiSol`` (casadi exposes no constructor for one).
* ``stats()`` and ``return_status()`` are answered here (casadi would ask its own
  solver object, which caspar replaces); so are ``debug``/``advanced`` (a
  ``casadi.OptiAdvanced`` subclass with the same answers and a Python
  ``show_infeasibilities``; ``debug.casadi_solver`` is the caspar nlpsol Function).
  ``copy()`` keeps the caspar selection (not the callback, as casadi's copy).
* ``to_function`` is rebuilt in Python with the caspar solver (same construction as
  casadi's).  ``callback(fn)`` works as casadi's: at every iteration the iterate is
  stored (``opti.debug.value`` reads it) and ``fn(i)`` is called with the iteration
  index, through nlpsol's ``iteration_callback`` (:class:`_OptiIteration`, what
  casadi's ``InternalOptiCallback`` does); ``callback()`` removes it.
* integer variables (``set_domain(x, 'integer')``) raise ModelError naming them;
  ``Opti('conic')`` problems are solved as NLPs (a semidefinite constraint raises
  casadi's "Psd constraints not implemented yet" for both).
"""

from __future__ import annotations

import sys
from typing import final

import casadi as ca
import numpy as np

from .frontend import _ALIVE, NlpsolFailure, nlpsol, validate_options
from .nlpsol_load import install as _install_reader  # noqa: F401 - casadi reads saved solvers
from .nlpsol_io import NLPSOL_OUT

_FAILED = ("Solver failed. You may use opti.debug.value to investigate the latest values "
           "of variables. return_status is '{}'")


#: casadi's own Opti, kept: a script may put caspar's Opti in its place
#: (``casadi.Opti = Opti``), and the methods below must still reach casadi's
_CASADI_OPTI = ca.Opti


@final
class Opti(_CASADI_OPTI):
    """``casadi.Opti`` whose ``solver('caspar', plugin_opts, solver_opts)`` selects
    caspar (final).  Every other solver name is casadi's own path."""

    def __init__(self, *args):
        _CASADI_OPTI.__init__(self, *args)
        self._caspar_opts = None     # nlpsol options while 'caspar' is selected
        self._fn = None              # the compiled NlpsolFunction
        self._fn_key = None          # (x, p, f, g, callback) it was compiled for
        self._stats = None
        self._user_callback = None   # fn(i) of callback(fn)
        self._iteration = None       # its nlpsol iteration_callback (_OptiIteration)

    def callback(self, *args):
        """casadi's ``callback(fn)``: ``fn(i)`` after each iteration, with the iterate
        stored so that ``opti.debug.value`` reads it; ``callback()`` removes it."""
        _CASADI_OPTI.callback(self, *args)       # casadi's own solvers keep working
        self._user_callback = args[0] if args else None

    # ------------------------------------------------------------ selection
    def solver(self, name, plugin_options=None, solver_options=None):
        """casadi's ``solver(name, plugin_options, solver_options)``; ``'caspar'``
        options are validated now (casadi would at ``solve``)."""
        plugin_options = dict(plugin_options or {})
        solver_options = dict(solver_options or {})
        if name != "caspar":
            self._caspar_opts = None
            self._fn = None
            return _CASADI_OPTI.solver(self, name, plugin_options, solver_options)
        opts = dict(plugin_options)
        opts["caspar"] = {**dict(opts.get("caspar") or {}), **solver_options}
        validate_options(opts)
        self._caspar_opts = opts
        self._fn = None

    @property
    def uses_caspar(self) -> bool:
        return self._caspar_opts is not None

    # ------------------------------------------------------------ solve
    def solve(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.solve(self)
        return self._solve(accept_limit=False)

    def solve_limited(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.solve_limited(self)
        return self._solve(accept_limit=True)

    def _solve(self, accept_limit: bool) -> "OptiSol":
        adv = ca.OptiAdvanced(self)           # the same node, not a copy
        fn = self._function(adv)
        adv.solve_prepare()
        arg = adv.arg()
        self._stats = None
        r = fn(x0=arg["x0"], p=arg["p"], lbg=arg["lbg"], ubg=arg["ubg"],
               lam_g0=arg["lam_g0"])
        adv.res(r)
        self._stats = fn.stats()
        st = self._stats
        ok = st["success"] or (accept_limit
                               and st["unified_return_status"] == "SOLVER_RET_LIMITED")
        if not ok:
            raise NlpsolFailure(_FAILED.format(st["return_status"]))
        return OptiSol(self._snapshot(), st)

    def _function(self, adv):
        """The caspar nlpsol Function for the baked problem (compiled again only when
        the problem or the options changed)."""
        if adv.problem_dirty():
            adv.bake()
        if any(adv.get_meta_con(g).type == ca.OPTI_PSD for g in adv.constraints()):
            # casadi's OptiNode::solver_construct (caspar solves NLPs only)
            raise RuntimeError(
                "Psd constraints not implemented yet. Perhaps you intended an element-wise "
                "inequality? In that case, make sure that the matrix is flattened (e.g. "
                "mat(:)).")
        key = (self.x, self.p, self.f, self.g)
        user = self._user_callback
        if self._fn is not None and all(ca.is_equal(a, b, 0)
                                        for a, b in zip(key, self._fn_key[:4])) \
                and self._fn_key[4] is user:
            if self._iteration is not None:
                self._iteration.reset()
            return self._fn
        nlp = _scaled_nlp(adv, *key)
        opts = dict(self._caspar_opts)
        self._iteration = None
        if user is not None:
            self._iteration = _OptiIteration(self, user, adv.nx, adv.ng, adv.np)
            opts["iteration_callback"] = self._iteration
        disc = _discrete(adv)
        if any(disc):
            opts["discrete"] = disc
        self._fn = nlpsol("solver", "caspar", nlp, opts)
        self._fn_key = key + (user,)
        # bad-input messages point at the line that declared the constraint/variable
        self._fn._core.describe.update(
            constraint=lambda i: ca.OptiAdvanced(self).g_describe(i, {}).replace("\n", " "),
            variable=lambda i: ca.OptiAdvanced(self).x_describe(i, {}).replace("\n", " "))
        return self._fn

    # ------------------------------------------------------------ results
    def stats(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.stats(self)
        ca.OptiAdvanced(self).assert_solved()
        if self._stats is None:
            raise RuntimeError("No stats available: the caspar solver has not run.")
        return dict(self._stats)

    def return_status(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.return_status(self)
        return self._stats["return_status"] if self._stats else "unknown"

    @property
    def debug(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.debug.fget(self)
        return OptiDebug(_CASADI_OPTI.copy(self), self._stats, self._fn)

    @property
    def advanced(self):
        if not self.uses_caspar:
            return _CASADI_OPTI.advanced.fget(self)
        return OptiDebug(_CASADI_OPTI.copy(self), self._stats, self._fn)

    def copy(self):
        """casadi's ``copy()``: the problem and the solver selection, not the callback
        (casadi's copy does not carry ``callback(fn)``)."""
        other = Opti.__new__(Opti)
        _CASADI_OPTI.__init__(other, _CASADI_OPTI.copy(self))   # shares the fresh deep copy
        other._caspar_opts = None if self._caspar_opts is None else dict(self._caspar_opts)
        other._stats = self._stats
        other._user_callback, other._iteration = None, None
        # the compiled solver is shared unless it calls this Opti's callback (whose
        # iteration counter and stored iterate are this one's)
        shared = self._fn is not None and self._user_callback is None
        other._fn, other._fn_key = (self._fn, self._fn_key) if shared else (None, None)
        return other

    def _snapshot(self) -> "Opti":
        """The solved problem as ``sol.opti`` holds it: a copy that keeps the compiled
        solver and the statistics (its ``debug.casadi_solver``, ``stats()``)."""
        other = self.copy()
        other._fn, other._fn_key = self._fn, self._fn_key
        return other

    def to_function(self, name, args, res, name_in=None, name_out=None, opts=None):
        """casadi's ``to_function`` (args: symbols of the problem; res: expressions of
        them), with the caspar solver inside (casadi's construction, in Python)."""
        rest = [a for a in (name_in, name_out) if a is not None]
        if not self.uses_caspar:
            return _CASADI_OPTI.to_function(self, name, args, res, *rest,
                                       *([opts] if opts is not None else []))
        adv = ca.OptiAdvanced(self)
        fn = self._function(adv)
        _ALIVE.append(fn._callback)           # the Function may outlive this Opti
        groups = {}
        for kind in (ca.OPTI_VAR, ca.OPTI_PAR, ca.OPTI_DUAL_G):
            syms = list(adv.active_symvar(kind))
            vals = [ca.MX(v) for v in adv.active_values(kind)]
            groups[kind] = (syms, vals)
        for k, a in enumerate(args):
            if not a.is_valid_input():
                raise ValueError(f"Argument {k} is not purely symbolic.")
            for prim in a.primitives():
                adv.get_meta(prim)     # casadi's error for a symbol of another Opti
                for kind, (syms, vals) in groups.items():
                    for i, s in enumerate(syms):
                        if ca.is_equal(prim, s, 0):
                            vals[i] = prim
        xs, x0 = groups[ca.OPTI_VAR]
        ps, p = groups[ca.OPTI_PAR]
        ls, l0 = groups[ca.OPTI_DUAL_G]
        P = ca.veccat(*p)
        bounds = ca.Function("bounds", [self.p], [self.lbg, self.ubg])
        lbg, ubg = bounds(P)
        r = fn(x0=ca.veccat(*x0), p=P, lbg=lbg, ubg=ubg, lam_g0=ca.veccat(*l0))
        helper = ca.Function("helper", [ca.veccat(*xs), ca.veccat(*ps), ca.veccat(*ls)],
                             list(res))
        out = helper(r["x"], P, r["lam_g"])
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        extra = [x for x in (name_in, name_out) if x is not None]
        return ca.Function(name, list(args), out, *extra, *([opts] if opts else []))


class _OptiIteration(ca.Callback):
    """nlpsol's ``iteration_callback`` for ``Opti.callback(fn)`` (final): called with
    nlpsol's outputs at each iterate, it stores them in the Opti problem (``res``, as
    after a solve, so ``opti.debug.value`` reads the iterate) and calls ``fn(i)``, i
    counting from 0 in each solve; it returns 0 (never stops the solve)."""

    def __init__(self, opti, fn, nx: int, ng: int, np_: int):
        ca.Callback.__init__(self)
        self.opti, self.fn = opti, fn
        self.sizes = dict(x=nx, lam_x=nx, f=1, g=ng, lam_g=ng, p=np_, lam_p=np_)
        self.i = 0
        self.construct("opti_iteration", {})

    def reset(self) -> None:
        self.i = 0

    def get_n_in(self):
        return len(NLPSOL_OUT)

    def get_n_out(self):
        return 1

    def get_name_in(self, i):
        return NLPSOL_OUT[i]

    def get_sparsity_in(self, i):
        k = self.sizes[NLPSOL_OUT[i]]
        if NLPSOL_OUT[i] == "lam_p" and k == 0:
            return ca.Sparsity.dense(0, 0)
        return ca.Sparsity.dense(k, 1)

    def eval(self, arg):
        ca.OptiAdvanced(self.opti).res(dict(zip(NLPSOL_OUT, arg)))
        self.fn(self.i)
        self.i += 1
        return [0]


def _scaled_nlp(adv, x, p, f, g) -> dict:
    """The problem in the solver's (scaled) space, as casadi's ``bake`` builds it and
    ``arg``/``res`` expect: with ``x = s * xi + o`` (``set_linear_scale``), the solver
    sees ``f(s xi + o) / f_scale`` and ``g(s xi + o) / g_scale`` in the variable ``xi``
    (Opti's ``f``/``g`` properties are the unscaled forms; the scaled ones are not
    exposed).  No scaling set: the expressions as they are."""
    s, o = ca.DM(adv.x_linear_scale), ca.DM(adv.x_linear_scale_offset)
    gs, fs = ca.DM(adv.g_linear_scale), float(adv.f_linear_scale)
    nlp = {"x": x, "p": p}
    if not f.is_empty():
        nlp["f"] = f
    nlp["g"] = g
    if (all(v == 1.0 for v in s.nonzeros()) and all(v == 0.0 for v in o.nonzeros())
            and all(v == 1.0 for v in gs.nonzeros()) and fs == 1.0):
        return nlp
    outs = [f if not f.is_empty() else ca.MX(0), g]
    unscaled = ca.Function("opti_unscaled", [x, p], outs)
    fx, gx = unscaled(x * s + o, p)
    if not f.is_empty():
        nlp["f"] = fx / fs
    nlp["g"] = gx / gs if g.numel() else gx
    return nlp


def _discrete(adv) -> list:
    """Per variable nonzero: is it integer (``set_domain(x, 'integer')``)?"""
    out = []
    for v in adv.active_symvar(ca.OPTI_VAR):
        out += [adv.get_meta(v).domain == ca.OPTI_DOMAIN_INTEGER] * int(v.nnz())
    return out


@final
class OptiSol:
    """What :meth:`Opti.solve` returns with caspar (final): a snapshot of the solved
    problem, as ``casadi.OptiSol`` (``value``, ``value_variables``,
    ``value_parameters``, ``stats``, ``opti``)."""

    def __init__(self, snapshot: ca.Opti, stats: dict):
        self._opti = snapshot
        self._stats = dict(stats)

    def value(self, x, values=None):
        return self._opti.value(x, list(values or []))

    def value_variables(self):
        return self._opti.value_variables()

    def value_parameters(self):
        return self._opti.value_parameters()

    def stats(self) -> dict:
        return dict(self._stats)

    @property
    def opti(self) -> "Opti":
        """The solved problem (casadi's ``sol.opti``: a property): ``nx``, ``debug``..."""
        return self._opti

    def __str__(self):
        return str(self._opti)       # casadi prints the solved problem

    def __repr__(self):
        return f"OptiSol(caspar: {self._stats.get('return_status')})"


@final
class OptiDebug(ca.OptiAdvanced):
    """``opti.debug`` / ``opti.advanced`` after a caspar solve (final): casadi's
    ``OptiAdvanced`` on a copy of the problem, with ``stats``, ``return_status`` and
    ``show_infeasibilities`` answered from the caspar solve."""

    def __init__(self, snapshot: ca.Opti, stats, solver=None):
        ca.OptiAdvanced.__init__(self, snapshot)
        self._stats = None if stats is None else dict(stats)
        self._solver = solver

    @property
    def casadi_solver(self):
        """The caspar nlpsol Function the problem was solved with (casadi's: its
        nlpsol), ``get_function('nlp_jac_g')`` and the rest included."""
        if self._solver is None:
            raise RuntimeError("Opti: no solver yet (solve first)")
        return self._solver

    def stats(self):
        self.assert_solved()
        if self._stats is None:
            raise RuntimeError("No stats available: the caspar solver has not run.")
        return dict(self._stats)

    def return_status(self):
        return self._stats["return_status"] if self._stats else "unknown"

    def show_infeasibilities(self, tol=0.0, opts=None):
        """casadi's listing of the constraints violated by more than ``tol`` at the
        current values (unscaled), in order of declaration."""
        # (casadi's Python value() gives a float or a NumPy array)
        g, lbg, ubg = (np.atleast_1d(np.asarray(self.value(e), dtype=float)).ravel()
                       for e in (self.g, self.lbg, self.ubg))
        w = sys.stdout.write
        w(f"Violated constraints (tol {tol:g}), in order of declaration:\n")
        for i in range(g.size):
            err = max(g[i] - ubg[i], lbg[i] - g[i])
            if err >= tol:
                w(f"------- i = {i}/{g.size} ------ \n")
                w(f"{lbg[i]:g} <= {g[i]:g} <= {ubg[i]:g} (viol {err:g})\n")
                w(self.g_describe(i, dict(opts or {})) + "\n")
