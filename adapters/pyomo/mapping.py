"""The correspondence between an extracted NLP and the Pyomo model it came from.

For the NLP ``min f(x; p) s.t. lbg <= g(x; p) <= ubg, lbx <= x <= ubx``:

* ``x[i]``  is ``x_vars[i].value``  (free ``VarData`` that appear in an active
  objective or constraint, in order of first appearance);
* ``p[k]``  is ``p_objs[k].value``  (mutable ``ParamData`` and fixed ``VarData``);
* row ``j`` of ``g`` is ``constraints[j]`` (a ``ConstraintData``) with

      body_j(x; p) = g_j(x; p) + shift[j],   lbg[j] = lb_j - shift[j],   ubg[j] = ub_j - shift[j]

  (the numeric constant of the body's top-level sum is moved into the bounds,
  as the NL writer does); ``lbg[j] == ubg[j]`` for an equality;
* ``f = sense * objective.expr`` with ``sense = -1`` for a maximization
  (``NLPModel.objective`` is then ``-expr``), ``objective is None`` and
  ``f = 0`` for a feasibility problem.

A re-solve after the user changes mutable Params or fixed-Var values needs no
recompilation: :meth:`PyomoMapping.refresh` reads the new ``p``, the variable
bounds and any constraint bounds that are expressions of Params, and
:meth:`PyomoMapping.check_structure` tells whether the model changed in a way
that does need a new extraction (a Var fixed or unfixed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import final

import numpy as np

from caspar_backend.errors import ModelError, NonFiniteError, num

_INF = math.inf


@final
class LazyNames(Sequence):
    """``names[i] == objs[i].name``, computed on first access and cached.

    Pyomo's fully qualified names cost several microseconds each (they format
    the index); most names of a large model are never printed, so they are
    built only when an error message, a log or a user asks for them.
    """

    __slots__ = ("_objs", "_cache")

    def __init__(self, objs):
        self._objs = objs
        self._cache: list = [None] * len(objs)

    def __len__(self) -> int:
        return len(self._objs)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        s = self._cache[i]
        if s is None:
            s = self._cache[i] = self._objs[i].name
        return s

    def __repr__(self) -> str:
        return f"LazyNames({len(self)} names)"

    def __reduce__(self):
        # pickled as the plain list of names: the Pyomo components stay in this process
        return (list, (list(self),))


@final
@dataclass(frozen=True)
class PyomoData:
    """The numbers of an extracted model, re-read from Pyomo (float64 arrays)."""

    p: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    x0: np.ndarray


@final
@dataclass(eq=False)
class PyomoMapping:
    """Ordered Pyomo components behind x, p and g (see the module docstring)."""

    model: object
    x_vars: list
    p_objs: list
    constraints: list
    objective: object | None
    sense: int
    shift: np.ndarray
    #: rows whose bounds are Pyomo expressions (mutable Params, fixed Vars):
    #: ``(j, lower expr or None, upper expr or None)``, re-evaluated by refresh
    bound_exprs: list = field(default_factory=list)
    #: numeric bounds of Pyomo's constraints before the shift, float64 (m,)
    con_lb: np.ndarray | None = None
    con_ub: np.ndarray | None = None
    #: active constraints with neither bound (skipped, as the NL writer does)
    skipped: list = field(default_factory=list)
    #: ``(Constraint component, start, stop)``: runs of rows from one component
    blocks: list = field(default_factory=list)
    #: rows whose body depends on no variable of x ("trivial" rows in the NL
    #: writer's words), int (t,), and their g nodes (functions of p only)
    trivial_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.intp))
    trivial_roots: list = field(default_factory=list)

    # ------------------------------------------------------------ sizes/names
    @property
    def n(self) -> int:
        return len(self.x_vars)

    @property
    def m(self) -> int:
        return len(self.constraints)

    @property
    def var_names(self) -> LazyNames:
        return LazyNames(self.x_vars)

    @property
    def con_names(self) -> LazyNames:
        return LazyNames(self.constraints)

    @property
    def param_names(self) -> LazyNames:
        return LazyNames(self.p_objs)

    # ---------------------------------------------------------- reading data
    def param_values(self) -> np.ndarray:
        """``p`` from the current values of the mutable Params and fixed Vars."""
        try:
            vals = [o.value for o in self.p_objs]
        except ValueError:  # a mutable Param without a value raises on .value
            for o in self.p_objs:
                try:
                    o.value
                except ValueError:
                    raise ModelError(_no_value(o, None)) from None
            raise
        try:
            p = np.array(vals, dtype=float)  # note: None silently becomes NaN here
        except (TypeError, ValueError):
            p = None
        if p is None or p.shape != (len(vals),) or np.isnan(p).any():
            for o, v in zip(self.p_objs, vals):
                try:
                    if v is None:
                        raise TypeError
                    float(v)
                except (TypeError, ValueError):
                    raise ModelError(_no_value(o, v)) from None
        bad = np.flatnonzero(~np.isfinite(p))
        if bad.size:
            o = self.p_objs[bad[0]]
            raise NonFiniteError(f"{_kind(o)} {o.name} has the non-finite value {num(p[bad[0]])}")
        self._check_fixed_in_bounds(p)
        return p

    @cached_property
    def _fixed_positions(self) -> np.ndarray:
        """Positions in p of the fixed Vars (the others are mutable Params), int (k,)."""
        return np.array([k for k, o in enumerate(self.p_objs) if o.is_variable_type()],
                        dtype=np.intp)

    def _check_fixed_in_bounds(self, p) -> None:
        """Raise :class:`.infeasible.TriviallyInfeasibleError` for a fixed Var whose value
        ``p[k]`` is outside its bounds by more than ``FIXED_TOL``, as Pyomo's NL writer
        does for ``SolverFactory('ipopt')`` (the same exception type and words): such a
        model never reaches IPOPT."""
        fixed = self._fixed_positions
        if not fixed.size:
            return
        from .infeasible import FIXED_TOL, TriviallyInfeasibleError

        objs = self.p_objs
        bounds = [objs[k].bounds for k in fixed]     # (re-read: they may be expressions)
        lb = np.array([-_INF if b[0] is None else b[0] for b in bounds], dtype=float)
        ub = np.array([_INF if b[1] is None else b[1] for b in bounds], dtype=float)
        val = p[fixed]
        bad = np.flatnonzero((lb - val > FIXED_TOL) | (ub - val < -FIXED_TOL))
        if bad.size:
            v, (lo, hi) = objs[fixed[bad[0]]], bounds[bad[0]]
            raise TriviallyInfeasibleError(
                f"model contains a trivially infeasible variable '{v.name}' "
                f"(fixed value {v.value} outside bounds [{lo}, {hi}]).")

    def var_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lbx, ubx)`` from the Vars' bounds and domains (None -> -inf/+inf)."""
        try:
            lb, ub = zip(*[v.bounds for v in self.x_vars]) if self.x_vars else ((), ())
        except ValueError:  # Pyomo rejects a NaN bound (e.g. a NaN Param) on access
            for v in self.x_vars:
                try:
                    v.bounds
                except ValueError as exc:
                    raise NonFiniteError(f"variable {v.name} has an invalid bound: "
                                         f"{exc}") from None
            raise
        lbx = np.array([-_INF if b is None else b for b in lb], dtype=float)
        ubx = np.array([_INF if b is None else b for b in ub], dtype=float)
        _check_bounds(lbx, ubx, self.x_vars, "variable")
        return lbx, ubx

    def initial_point(self, lbx=None, ubx=None) -> np.ndarray:
        """Current Var values; ``None`` becomes 0 projected into the bounds."""
        vals = [v.value for v in self.x_vars]
        x0 = np.array([0.0 if v is None else v for v in vals], dtype=float)
        missing = np.array([v is None for v in vals], dtype=bool)
        if missing.any():
            if lbx is None:
                lbx, ubx = self.var_bounds()
            x0[missing] = np.minimum(np.maximum(0.0, lbx[missing]), ubx[missing])
        return x0

    def con_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(lbg, ubg)``: the constraints' bounds (expressions re-evaluated)
        minus the constant shift."""
        lo, hi = self.con_lb.copy(), self.con_ub.copy()
        if self.bound_exprs:
            from pyomo.core.expr.visitor import value

            for j, le, ue in self.bound_exprs:
                if le is not None:
                    lo[j] = value(le)
                if ue is not None:
                    hi[j] = value(ue)
            _check_bounds(lo, hi, self.constraints, "constraint")
        return lo - self.shift, hi - self.shift

    def refresh(self) -> PyomoData:
        """Every number of the NLP re-read from the Pyomo model (structure unchanged;
        call :meth:`check_structure` first if Vars may have been (un)fixed)."""
        lbx, ubx = self.var_bounds()
        lbg, ubg = self.con_bounds()
        return PyomoData(self.param_values(), lbx, ubx, lbg, ubg,
                         self.initial_point(lbx, ubx))

    def check_structure(self) -> None:
        """Raise :class:`ModelError` if a Var in x was fixed or a fixed Var in p was
        unfixed since extraction: the NLP must then be extracted again."""
        for v in self.x_vars:
            if v.fixed:
                raise ModelError(f"variable {v.name} was fixed after the model was "
                                 "extracted; extract the model again")
        for o in self.p_objs:
            if o.is_variable_type() and not o.fixed:
                raise ModelError(f"variable {o.name} was unfixed after the model was "
                                 "extracted; extract the model again")

    def trivial_violation(self, data: PyomoData, tol: float):
        """The first trivial row outside its bounds by more than ``tol`` (absolute,
        as the NL writer tests them) at the current p, as ``(j, body value)``, or
        None.  ``lbg - g == lb - body`` (the shift cancels)."""
        if not self.trivial_roots:
            return None
        from caspar_backend.expr import evaluate

        g = np.asarray(evaluate(self.trivial_roots, (), data.p), dtype=float)
        rows = self.trivial_rows
        bad = np.flatnonzero((data.lbg[rows] - g > tol) | (g - data.ubg[rows] > tol))
        if not bad.size:
            return None
        j = int(rows[bad[0]])
        return j, float(g[bad[0]] + self.shift[j])

    # --------------------------------------------------------- writing back
    def load_x(self, x) -> None:
        """Set ``x_vars[i].value = x[i]`` (no bound or domain validation: an
        interior-point iterate may sit a hair outside a bound)."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.size != self.n:
            raise ModelError(f"x has {x.size} entries, the model has {self.n} variables")
        for v, val in zip(self.x_vars, x.tolist()):
            v.set_value(val, skip_validation=True)

    def body_values(self, g) -> np.ndarray:
        """Pyomo's constraint bodies from ``g``: ``body = g + shift``."""
        return np.asarray(g, dtype=float).reshape(-1) + self.shift


# ----------------------------------------------------------------- helpers
def _kind(o) -> str:
    return "fixed variable" if o.is_variable_type() else "parameter"


def _no_value(o, v) -> str:
    if v is None:
        return f"{_kind(o)} {o.name} has no value"
    return f"{_kind(o)} {o.name} has the non-numeric value {v!r}"


def _check_bounds(lo, hi, objs, what) -> None:
    """NaN or an infinity on the wrong side is an error naming the component."""
    bad = np.flatnonzero(np.isnan(lo) | np.isnan(hi) | (lo == _INF) | (hi == -_INF))
    if bad.size:
        j = bad[0]
        raise NonFiniteError(f"{what} {objs[j].name} has a non-finite bound "
                             f"(lower {num(lo[j])}, upper {num(hi[j])})")
