"""Pyomo's front door to least squares: residuals in, Levenberg-Marquardt out.

    from caspar_backend.pyomo import least_squares
    lsq = least_squares(model)                          # the objective: a sum of squares
    lsq = least_squares(model, model.r, residual_block_size=2, loss=Huber(1.0))
    summary = lsq.solve(max_num_iterations=100)         # the solution loaded into the Vars

The residuals are an (indexed) ``Expression`` component, a list of Pyomo expressions, or
-- by default -- read from the model's one active objective, minimized and written as
a sum of squared terms ``sum_i w_i e_i^2`` (constant ``w_i > 0``, the whole sum possibly
scaled by a positive constant, e.g. ``0.5 * sum(...)``): then ``r_i = sqrt(2 w_i) e_i``,
so Ceres' cost ``1/2 sum r^2`` is the objective's value.  A term that is not a weighted
square, or a constant term, is refused naming the objective; so is an active
constraint (least squares has bounds only: solve such a model as an NLP).

Each residual is walked into caspar's graph (:class:`~.walker.ExpressionWalker`, the
reader of ``from_pyomo``) and compiled as the rows of a
:class:`~caspar_backend.lsq.problem.LeastSquaresProblem`, exactly as the CasADi front
door (:mod:`caspar_backend.adapters.casadi.least_squares`) does; ``residual_block_size``
consecutive residuals form one residual block of the loss.  The variables are the ones
the residuals read, with their bounds and domains (``lbx == ubx`` holds one constant);
fixed Vars and mutable Params are parameters.  Values, bounds and parameters are read
from the model at every :meth:`PyomoLeastSquares.solve`, which loads the solution into
the Vars (as a Pyomo solve with ``load_solutions``) and returns Ceres' summary.
"""

from __future__ import annotations

import math
from typing import final

import numpy as np

from caspar_backend.errors import ModelError

from .mapping import LazyNames, PyomoMapping


def least_squares(model, residuals=None, *, residual_block_size: int = 1, loss=None):
    """The :class:`PyomoLeastSquares` of ``model`` (see the module docstring)."""
    return PyomoLeastSquares(model, residuals, residual_block_size, loss)


@final
class PyomoLeastSquares:
    """A Pyomo model's least-squares problem (final).  ``problem``: the compiled
    :class:`~caspar_backend.lsq.problem.LeastSquaresProblem`; ``mapping``: its Vars
    (``x_vars``) and parameters (``p_objs``)."""

    def __init__(self, model, residuals, residual_block_size: int, loss):
        from pyomo.core.base import Constraint, Objective

        from caspar_backend.expr import Graph
        from caspar_backend.lsq.problem import LeastSquaresProblem
        from caspar_backend.model import NLPModel

        from .walker import ExpressionWalker

        if not hasattr(model, "component_data_objects"):
            raise ModelError(f"least_squares expects a Pyomo model or Block, got "
                             f"{type(model).__name__}")
        for con in model.component_data_objects(Constraint, active=True, descend_into=True):
            raise ModelError(f"least_squares: constraint {con.name} is active; least squares "
                             "has bounds only (deactivate it, or solve the model as an NLP)")
        items = (_objective_residuals(model, Objective) if residuals is None
                 else _given(residuals))
        m = len(items)
        k = int(residual_block_size)
        if k < 1 or m % k:
            raise ModelError(f"least_squares: residual_block_size={residual_block_size} does "
                             f"not divide the {m} residuals")
        g = Graph()
        walker = ExpressionWalker(g)
        roots = []
        try:
            for context, _, expr in items:
                walker.context = context            # named in the walker's errors
                roots.append(walker.walk(expr))
        finally:
            walker.release()
        self.mapping = PyomoMapping(model=model, x_vars=walker.x_vars, p_objs=walker.p_objs,
                                    constraints=[], objective=None, sense=1,
                                    shift=np.zeros(0))
        lbx, ubx = self.mapping.var_bounds()
        nlp = NLPModel(g, g.const(0.0), roots, lbx, ubx, np.zeros(m), np.zeros(m),
                       x0=self.mapping.initial_point(lbx, ubx),
                       p=self.mapping.param_values(), var_names=LazyNames(walker.x_vars),
                       param_names=LazyNames(walker.p_objs),
                       con_names=[name for _, name, _ in items],
                       source="least squares (pyomo)")
        self.problem = LeastSquaresProblem(
            nlp, loss=loss, residual_block_of_row=np.arange(m, dtype=np.int64) // k)

    def solve(self, x0=None, **options):
        """Levenberg-Marquardt from the Vars' current values (or ``x0``, in
        ``mapping.x_vars`` order) with the model's current bounds and parameters;
        ``options``: :class:`~caspar_backend.lsq.options.SolverOptions`.  The solution is
        loaded into the Vars; returns the :class:`~caspar_backend.lsq.summary.Summary`."""
        mp = self.mapping
        lbx, ubx = mp.var_bounds()
        x0 = mp.initial_point(lbx, ubx) if x0 is None else np.asarray(x0, dtype=float)
        summary = self.problem.solve(x0=x0, p=mp.param_values(), lbx=lbx, ubx=ubx,
                                     **options)
        for v, val in zip(mp.x_vars, np.asarray(summary.x, dtype=float).tolist()):
            v.set_value(val, skip_validation=True)
        return summary


def _given(residuals) -> list:
    """``[(component, name, expression)]`` of residuals given as an Expression
    component (indexed or not) or an iterable of Pyomo expressions or numbers."""
    if hasattr(residuals, "is_indexed") and residuals.is_indexed():
        return [(r, r.name, r.expr) for r in residuals.values()]
    if hasattr(residuals, "expr") and hasattr(residuals, "name"):
        return [(residuals, residuals.name, residuals.expr)]
    try:
        items = list(residuals)
    except TypeError:
        raise ModelError(f"least_squares: residuals must be an Expression component or a "
                         f"list of expressions, got {type(residuals).__name__}") from None
    return [(None, f"r[{i}]", e) for i, e in enumerate(items)]


def _objective_residuals(model, Objective) -> list:
    """``[(objective, name, r_i)]`` from the one active objective ``sum_i w_i e_i^2``."""
    objs = list(model.component_data_objects(Objective, active=True, descend_into=True))
    if len(objs) != 1:
        raise ModelError(f"least_squares: the model has {len(objs)} active objectives; give "
                         "the residuals, or keep one objective that is a sum of squares")
    obj = objs[0]
    if not obj.is_minimizing():
        raise ModelError(f"least_squares: objective {obj.name} is maximized; a sum of "
                         "squares is minimized")
    terms = []
    _squares(obj.expr, 1.0, terms, obj.name)
    out = []
    for i, (w, e) in enumerate(terms):
        c = math.sqrt(2.0 * w)
        out.append((obj, f"{obj.name}.r[{i}]", e if c == 1.0 else c * e))
    return out


def _squares(expr, scale: float, out: list, name: str) -> None:
    """Append ``(w, e)`` for each term ``w e^2`` of ``scale * expr``."""
    from pyomo.core.expr import numeric_expr as ne

    if isinstance(expr, ne.SumExpression):
        for a in expr.args:
            _squares(a, scale, out, name)
        return
    if isinstance(expr, ne.PowExpression):
        base, exp = expr.args
        if _constant(exp) == 2.0:
            out.append((scale, base))
            return
    if isinstance(expr, (ne.ProductExpression, ne.MonomialTermExpression)):
        a, b = expr.args
        for c, rest in ((a, b), (b, a)):
            w = _constant(c)
            if w is not None and w > 0:
                _squares(rest, scale * w, out, name)
                return
    if isinstance(expr, ne.DivisionExpression):
        num, den = expr.args
        d = _constant(den)
        if d is not None and d > 0:
            _squares(num, scale / d, out, name)
            return
    raise ModelError(f"least_squares: objective {name} is not a sum of weighted squares "
                     f"(the term {_short(expr)}); give the residuals instead")


def _constant(e):
    """``e``'s value when it is a constant number (no Var, no mutable Param), else None."""
    from pyomo.core.expr.numvalue import is_constant, value

    if isinstance(e, (int, float)):
        return float(e)
    try:
        return float(value(e)) if is_constant(e) else None
    except (TypeError, ValueError):
        return None


def _short(expr, width: int = 80) -> str:
    s = str(expr)
    return s if len(s) <= width else s[:width - 3] + "..."
