"""A Pyomo model -> :class:`~caspar_backend.model.NLPModel` (+ its :class:`PyomoMapping`).

The model is an AML ``ConcreteModel``/Block or a pyomo.kernel ``block`` (both
offer ``component_data_objects``; kernel constraints and MatrixConstraint rows
are read through the public ``to_bounded_expression()`` only).

The NLP is IPOPT's

    min f(x; p)   s.t.   lbg <= g(x; p) <= ubg,   lbx <= x <= ubx

* f: the single active ``Objective`` (``-expr`` with ``sense = -1`` for a
  maximization), or ``0`` when there is none;
* g: every active ``ConstraintData`` of the active Blocks (and of active References), each
  once (References and aliases are deduplicated by identity), in Pyomo's
  component order, through ``to_bounded_expression()``; the numeric constant
  of the body's top-level sum moves into the bounds; rows with neither bound
  are skipped (as the NL writer does); rows whose body has no free variable
  are kept but marked (``PyomoMapping.trivial_rows``): the front-end checks
  them against their bounds at each solve instead of solving them.  A model
  with a large Constraint component (:data:`TEMPLATE_MIN_ROWS`) has its rows read as
  template instances (:mod:`.templates`; unless ``templates=False``): they arrive as
  ``NLPModel.constraint_blocks``, the rows walked per instance as
  ``constraints`` at ``constraint_rows``;
* x: the free Vars that appear in f or g, in order of first appearance; their
  bounds are Pyomo's ``VarData.bounds`` (explicit bounds intersected with the
  domain); a missing value starts at 0 projected into the bounds (IPOPT's rule);
* p: the mutable Params and fixed Vars that appear in f or g.

Nothing in the user's model is modified: the extraction only reads.
"""

from __future__ import annotations

import math

import numpy as np

from caspar_backend.errors import ModelError, NonFiniteError, num
from caspar_backend.expr import Graph
from caspar_backend.model import NLPModel

from .mapping import LazyNames, PyomoMapping, _check_bounds
from .templates import TemplateReader
from .walker import DEPTH_LIMIT, ExpressionWalker

_INF = math.inf
#: a model with a Constraint component of at least this many rows is read as template
#: instances (:mod:`.templates`); a smaller model is walked per row, where the DAG
#: costs nothing worth saving and ``NLPModel.constraints`` keeps every row's expression
TEMPLATE_MIN_ROWS = 32
_MAX_LISTED = 10


def pyomo_to_model(model, *, depth_limit: int = DEPTH_LIMIT, templates: bool = True,
                   template_min_rows: int = TEMPLATE_MIN_ROWS) -> NLPModel:
    """Extract the NLP of a Pyomo model (``ConcreteModel`` or constructed Block).

    The result's ``meta['pyomo']`` is the :class:`PyomoMapping` that relates
    x, p and g back to the model's components.  ``depth_limit``: expression
    levels walked recursively before the walker switches to its explicit
    stack (any value gives the same result; see :mod:`.walker`).
    ``templates`` (default ``True``): when the model has a Constraint component of at
    least ``template_min_rows`` rows, read its rows as template instances
    (:mod:`.templates`; they then arrive pre-grouped as ``constraint_blocks``, and the
    rows the reader does not take -- ``Expr_if``, ``max``/``min``, rows without a free
    variable, ... -- as ``constraints`` with their ``constraint_rows``); ``False``
    walks every row into the DAG (the per-instance reference path).  Both give the
    same problem bit for bit: the same NLP, the same pattern groups in the same order
    and the same values, hence the same iterates
    (tests/adapters/test_pyomo_template_equivalence.py, docs/setup-pyomo-templates.md).
    pyomo.kernel models are always walked.
    """
    if templates is not True and templates is not False:
        raise ModelError(f"templates must be True or False, got {templates!r}")
    if not isinstance(template_min_rows, int) or template_min_rows < 1:
        raise ModelError(f"template_min_rows must be a positive int, got "
                         f"{template_min_rows!r}")
    from pyomo.common.gc_manager import PauseGC

    from .scipy_import import import_scipy

    import_scipy()        # (without Pyomo's eager scipy.stats: .scipy_import)
    if not hasattr(model, "component_data_objects"):
        raise ModelError(f"from_pyomo expects a Pyomo model or Block, got "
                         f"{type(model).__name__}")
    # Extraction allocates millions of small objects while the model holds
    # millions more; the cyclic collector would rescan them all many times
    # over for nothing (nothing made here is garbage), so it is paused, as
    # Pyomo's own writers do.
    with PauseGC():
        return _extract(model, depth_limit,
                        template_min_rows if templates and not _is_kernel(model) else None)


def _extract(model, depth_limit, min_rows) -> NLPModel:
    from pyomo.core.base import Constraint, Objective

    g = Graph()
    walker = ExpressionWalker(g, depth_limit)
    try:
        objective, f, sense = _objective(model, Objective, walker, g)
        reader = (TemplateReader(walker) if min_rows is not None
                  and _largest_component(model, Constraint) >= min_rows else None)
        rows = _constraints(model, Constraint, walker, g, reader)
        if reader is not None:
            blocks = _template_blocks(reader, rows, walker, g)
    finally:
        walker.release()
    _reject_discrete(walker.x_vars)

    if reader is None or not blocks:
        flat_rows, flat_roots, blocks = None, rows.roots, []
    else:                     # the rows walked per instance, in row order
        flat_rows = np.sort(np.array(rows.walked, dtype=np.int64))
        flat_roots = [rows.roots[j] for j in flat_rows.tolist()]
    trivial = _constant_rows(flat_roots)
    trivial_rows = trivial if flat_rows is None else flat_rows[trivial].tolist()
    mapping = PyomoMapping(
        model=model, x_vars=walker.x_vars, p_objs=walker.p_objs,
        constraints=rows.cons, objective=objective, sense=sense,
        shift=np.asarray(rows.shift, dtype=float), bound_exprs=rows.bound_exprs,
        con_lb=rows.lo, con_ub=rows.hi, skipped=rows.skipped, blocks=rows.blocks,
        trivial_rows=np.asarray(trivial_rows, dtype=np.intp),
        trivial_roots=[flat_roots[j] for j in trivial])
    lbx, ubx = mapping.var_bounds()
    lbg, ubg = mapping.con_lb - mapping.shift, mapping.con_ub - mapping.shift
    return NLPModel(
        g, f, flat_roots, lbx, ubx, lbg, ubg,
        x0=mapping.initial_point(lbx, ubx), p=mapping.param_values(),
        var_names=LazyNames(mapping.x_vars), con_names=LazyNames(mapping.constraints),
        param_names=LazyNames(mapping.p_objs), sense=sense, source="pyomo",
        meta={"pyomo": mapping}, constraint_blocks=blocks, constraint_rows=flat_rows,
        n_rows=len(mapping.constraints))


def from_pyomo(model, *, templates: bool = True):
    """``Problem(pyomo_to_model(model, templates=templates))``: the compiled problem of a
    Pyomo model (``templates=False`` forces the per-instance walker; the answer is the
    same either way, :func:`pyomo_to_model`)."""
    from caspar_backend.problem import Problem

    return Problem(pyomo_to_model(model, templates=templates))


# ------------------------------------------------------------------ objective
def _objective(model, Objective, walker, g):
    objs = _unique(model.component_data_objects(Objective, active=True, descend_into=True))
    if len(objs) > 1:
        names = ", ".join(o.name for o in objs[:_MAX_LISTED])
        more = f" and {len(objs) - _MAX_LISTED} more" if len(objs) > _MAX_LISTED else ""
        raise ModelError(f"the model has {len(objs)} active objectives ({names}{more}); "
                         "caspar needs exactly one, or none for a feasibility problem "
                         "(deactivate the others)")
    if not objs:
        return None, g.const(0.0), 1
    obj = objs[0]
    walker.context = obj
    if obj.expr is None:
        raise ModelError(f"objective {obj.name} has no expression")
    f = walker.walk(obj.expr)
    sense = -1 if int(obj.sense) < 0 else 1
    return obj, (_negate(g, f) if sense < 0 else f), sense


def _negate(g, f):
    """``-f`` with the minus pushed into a top-level sum / lincomb.

    ``-(t1 + ... + tn)`` becomes ``(-t1) + ... + (-tn)`` so a maximized sum
    still splits into per-term pattern groups (``neg(sum(...))`` would be one
    giant template).
    """
    if f.op == "sum":
        return g.sum([_negate(g, t) for t in f.args])
    if f.op == "lincomb":
        a = f.args
        return g.apply("lincomb", *[g.neg(x) if k % 2 == 0 else x for k, x in enumerate(a)])
    return g.neg(f)


# ---------------------------------------------------------------- constraints
class _Rows:
    """Accumulators of the constraint loop (a plain record; final)."""

    __slots__ = ("cons", "roots", "lo", "hi", "shift", "bound_exprs", "skipped", "blocks",
                 "walked", "last_comp", "start")

    def __init__(self):
        self.cons, self.roots, self.shift, self.walked = [], [], [], []
        self.last_comp, self.start = None, 0
        self.lo, self.hi = [], []
        self.bound_exprs, self.skipped, self.blocks = [], [], []


def _constraints(model, Constraint, walker, g, reader=None) -> _Rows:
    """Every row's bounds, shift and body node (``None`` for the rows ``reader``
    took as template instances; it is offered every row)."""
    from pyomo.common.numeric_types import native_numeric_types as native
    from pyomo.core.expr.visitor import value

    rows = _Rows()
    cons, roots, shift, lo, hi = rows.cons, rows.roots, rows.shift, rows.lo, rows.hi
    seen: set[int] = set()
    walk = walker.walk
    read = None if reader is None else reader.read
    sides = None if reader is None else _sides_reader(native)
    for con in _active_constraints(model, Constraint):
        key = id(con)
        if key in seen:
            continue
        seen.add(key)
        walker.context = con
        both = None if sides is None else sides(con)
        if both is not None:          # lhs - rhs read without building it
            lhs, rhs, lo_v = both
            comp = _owner(con)
            c = reader.read_difference(lhs, rhs, len(cons), comp)
            if c is not None:
                _append_row(rows, con, comp, None, c, lo_v, 0)
                continue
        try:
            lb, body, ub = con.to_bounded_expression()
        except ValueError as exc:  # e.g. a ranged constraint with a variable bound
            raise ModelError(f"constraint {con.name}: {exc}") from None
        # -- bounds: numbers stay numbers; expressions of Params are evaluated
        #    now and remembered, so refresh() can re-read them without recompiling
        lo_v = -_INF if lb is None else (lb if lb.__class__ in native else None)
        hi_v = _INF if ub is None else (ub if ub.__class__ in native else None)
        if lo_v is None or hi_v is None:
            lo_v, hi_v = _bound_exprs(con, lb, ub, lo_v, hi_v, value, rows.bound_exprs,
                                      len(cons))
        if lo_v == -_INF and hi_v == _INF:
            rows.skipped.append(con)
            continue
        comp = _owner(con)
        c = None if read is None or both is not None else read(body, len(cons), comp)
        if c is None:
            node, c = _walk_row(walk, g, body)
            rows.walked.append(len(cons))
        else:
            node = None
        _append_row(rows, con, comp, node, c, lo_v, hi_v)
    if rows.last_comp is not None:
        rows.blocks.append((rows.last_comp, rows.start, len(cons)))
    rows.lo = np.array(lo, dtype=float)
    rows.hi = np.array(hi, dtype=float)
    _check_bounds(rows.lo, rows.hi, cons, "constraint")
    return rows


def _append_row(rows, con, comp, node, c, lo_v, hi_v) -> None:
    """Record one row (and where a new component's run of rows starts)."""
    j = len(rows.cons)
    if comp is not rows.last_comp:
        if rows.last_comp is not None:
            rows.blocks.append((rows.last_comp, rows.start, j))
        rows.last_comp, rows.start = comp, j
    rows.cons.append(con)
    rows.roots.append(node)
    rows.shift.append(c)
    rows.lo.append(lo_v)
    rows.hi.append(hi_v)


def _sides_reader(native):
    """``sides(con) -> (lhs, rhs, lower bound) or None``: the two sides of an
    equality or one-sided inequality with variables on both sides and an expression
    on the right, the case where ``to_bounded_expression`` builds ``lhs - rhs`` and
    returns the bounds ``(0, 0)`` (equality) or ``(None, 0)``; the template reader
    reads that difference without building it (:meth:`.templates.TemplateReader.
    read_difference`).  Every other row (ranged, a constant side, a bare variable
    on the right) goes through ``to_bounded_expression``."""
    from pyomo.core.expr.relational_expr import EqualityExpression, InequalityExpression

    def sides(con):
        e = con.expr
        cls = e.__class__
        if cls is not EqualityExpression and cls is not InequalityExpression:
            return None
        lhs, rhs = e.args
        if (lhs.__class__ in native or rhs.__class__ in native
                or not rhs.is_expression_type() or not rhs.is_potentially_variable()
                or not lhs.is_potentially_variable()):
            return None
        return lhs, rhs, (0 if cls is EqualityExpression else -_INF)
    return sides


def _active_constraints(model, Constraint):
    """Active ConstraintData in block order; a Reference's members come last.

    Each Block's own Constraint components are visited in declaration order,
    Blocks in pre-order.  A Reference only aliases data that live elsewhere,
    so References are visited after everything else: their members then sit at
    their owners' positions, and members reachable only through a Reference
    (owner outside the active tree) are still included.  Duplicates are
    removed by the caller.
    """
    if _is_kernel(model):
        # pyomo.kernel has no References (an object has one parent), and its
        # component_data_objects walks active blocks and containers in
        # declaration order, which is what the NL writer uses for kernel models
        yield from model.component_data_objects(Constraint, active=True, descend_into=True)
        return
    refs = []
    for blk in model.block_data_objects(active=True, descend_into=True):
        for comp in blk.component_objects(Constraint, active=True, descend_into=False):
            if comp.is_reference():
                refs.append(comp)
                continue
            for con in comp.values():
                if con.active:
                    yield con
    for comp in refs:
        for con in comp.values():
            if con.active:
                yield con


def _bound_exprs(con, lb, ub, lo_v, hi_v, value, record, j):
    """Evaluate bounds that are fixed expressions; remember them for refresh."""
    le = ue = None
    try:
        if lo_v is None:
            le, lo_v = lb, float(value(lb))
        if hi_v is None:
            ue, hi_v = ub, float(value(ub))
    except (TypeError, ValueError) as exc:  # a Param without a value, ...
        raise ModelError(f"constraint {con.name}: cannot evaluate its bound: {exc}") from None
    if math.isnan(lo_v) or math.isnan(hi_v):
        raise NonFiniteError(f"constraint {con.name} has a non-finite bound "
                             f"(lower {num(lo_v)}, upper {num(hi_v)})")
    if not (lo_v == -_INF and hi_v == _INF):
        record.append((j, le, ue))
    return lo_v, hi_v


def _constant_rows(roots) -> list:
    """Rows whose body depends on no variable of x (every Var in it fixed, or
    none at all): the NL writer's "trivial" constraints.  Which rows these are
    depends only on which Vars are fixed, a structural fact (fixing or unfixing
    recompiles), so it is found once here; their values are checked each solve.
    One memo over all rows: shared subexpressions are looked at once."""
    has_var: dict[int, bool] = {}
    out = []
    for j, root in enumerate(roots):
        stack = [root]
        while stack:                      # post-order without recursion
            n = stack[-1]
            if n.id in has_var:
                stack.pop()
                continue
            todo = [a for a in n.args if a.id not in has_var]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            has_var[n.id] = n.op == "var" or any(has_var[a.id] for a in n.args)
        if not has_var[root.id]:
            out.append(j)
    return out


def _is_kernel(model) -> bool:
    """A pyomo.kernel block (``pmo.block``) rather than an AML Block."""
    from pyomo.core.kernel.block import IBlock

    return isinstance(model, IBlock)


def _owner(con):
    """The component a row belongs to: the AML's indexed Constraint, or the
    kernel container (``constraint_list``/``dict``, or the block) holding it."""
    try:
        return con.parent_component()
    except AttributeError:          # kernel objects know only their parent
        return con.parent


def _largest_component(model, Constraint) -> int:
    """Rows of the model's largest active Constraint component (AML models)."""
    return max((len(c) for c in model.component_objects(Constraint, active=True,
                                                         descend_into=True)), default=0)


def _walk_row(walk, g, body):
    """``(node, shift)`` of one row on the per-instance path: the numeric constant
    of the body's top-level sum moves into the bounds."""
    node = walk(body)
    c = 0.0
    if node.op == "sum" and node.args[-1].op == "const":
        c = node.args[-1].attr
        node = g.sum(node.args[:-1])
    return node, c


def _template_blocks(reader, rows, walker, g) -> list:
    """The reader's groups as TemplateBlocks; the rows of groups it refused after
    the pass (see :meth:`.templates.TemplateReader.blocks`) are walked now."""
    blocks, refused = reader.blocks()
    for j in refused:
        con = rows.cons[j]
        walker.context = con
        rows.roots[j], rows.shift[j] = _walk_row(walker.walk, g,
                                                 con.to_bounded_expression()[1])
        rows.walked.append(j)
    return blocks


# --------------------------------------------------------------------- checks
def _reject_discrete(x_vars) -> None:
    bad = [v for v in x_vars if not v.is_continuous()]
    if bad:
        names = ", ".join(f"{v.name} ({v.domain})" for v in bad[:_MAX_LISTED])
        more = f" and {len(bad) - _MAX_LISTED} more" if len(bad) > _MAX_LISTED else ""
        raise ModelError(f"caspar is a continuous NLP solver; the model has "
                         f"{len(bad)} discrete variable(s): {names}{more} "
                         "(relax them, e.g. with TransformationFactory('core.relax_integer_vars'), "
                         "or fix them)")


def _unique(objs) -> list:
    seen: set[int] = set()
    out = []
    for o in objs:
        if id(o) not in seen:
            seen.add(id(o))
            out.append(o)
    return out
