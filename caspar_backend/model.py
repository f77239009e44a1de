"""The framework-agnostic NLP an adapter hands to the compiler.

    min  f(x; p)   s.t.  lbg <= g(x; p) <= ubg,   lbx <= x <= ubx

:class:`NLPModel` holds the objective and constraint expressions as nodes of
one :class:`~caspar_backend.expr.Graph`, the bounds, the starting point, the
parameter values and the names of everything.  It is what
:func:`caspar_backend.from_pyomo` and :func:`caspar_backend.from_casadi`
produce and what :class:`caspar_backend.problem.Problem` compiles.

Conventions:

* ``objective`` is always minimized; a maximization is stored as
  ``objective = -f`` with ``sense = -1`` so results can report ``f``.
* Bounds are float64 arrays with ``-inf``/``+inf`` for absent bounds; an
  equality has ``lbg[i] == ubg[i]``.
* Parameters are leaves ``param(k)``; their values live in ``p`` so a
  re-solve with new values needs no recompilation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import IndexOutOfRangeError, ModelError, NonFiniteError, num
from .expr import Graph, Node, to_str, topo_order


def as_vector(name: str, v, size: int, fill: float | None = None) -> np.ndarray:
    """``v`` as a fresh float64 vector of length ``size``: a scalar (or length-1
    input) is broadcast, ``None`` becomes ``fill`` everywhere (when given);
    another length is a :class:`ModelError` naming ``name``."""
    if v is None and fill is not None:
        return np.full(size, fill, dtype=float)
    a = numbers(name, v).reshape(-1)
    if a.size == 1 and size != 1:
        a = np.full(size, float(a[0]))
    if a.size != size:
        raise ModelError(f"{name} has {a.size} entries, expected {size}")
    return a.copy()


_vec = as_vector


def numbers(name: str, v, copy: bool = False) -> np.ndarray:
    """``v`` as a float64 array (``numpy.asarray``; with ``copy`` always a new one,
    ``numpy.array``); what NumPy cannot read as numbers (a string, an object, a ragged
    list) is a :class:`ModelError` naming ``name``."""
    try:
        return np.array(v, dtype=float) if copy else np.asarray(v, dtype=float)
    except (TypeError, ValueError) as e:
        raise ModelError(f"{name} must be numbers ({e})") from None


def _bad_leaf(node: Node, n: int, q: int) -> bool:
    op = node.op
    return ((op == "var" and not 0 <= node.attr < n) or (op == "param" and not 0 <= node.attr < q)
            or op == "data")


def _bound_masks(lo, hi):
    """``(nan, order, wrong_inf)`` boolean masks of a bound pair: a NaN on either side,
    ``lo > hi``, and an infinite bound on the wrong side (``lo = +inf`` or ``hi =
    -inf``); the checks below report from these."""
    return (np.isnan(lo) | np.isnan(hi), lo > hi, (lo == np.inf) | (hi == -np.inf))


#: how a bound error begins (casadi's nlpsol words it so: its users and tests look for it)
ILL_POSED = "Ill-posed problem detected: "


def check_bounds(lo, hi, names, what: str, inputs: tuple | None = None) -> None:
    """Raise for the first component ``names[i]`` (a ``what``: 'variable' or
    'constraint') with a NaN bound, ``lo > hi``, or an infinite bound on the wrong side.
    ``inputs``: the names of the two bound arrays (e.g. ``('lbx', 'ubx')``), quoted with
    the offending entries when given."""
    def where(i):
        if inputs is None:
            return f"lb={float(lo[i])!r}, ub={float(hi[i])!r}"
        a, b = inputs
        return f"{a}[{i}]={float(lo[i])!r}, {b}[{i}]={float(hi[i])!r}"

    nan, order, wrong_inf = _bound_masks(lo, hi)
    bad = np.flatnonzero(nan)
    if bad.size:
        i = bad[0]
        raise NonFiniteError(f"{ILL_POSED}{what} {names[i]} has a NaN bound"
                             + (f" ({where(i)})" if inputs else ""))
    bad = np.flatnonzero(order)
    if bad.size:
        i = bad[0]
        suffix = f" ({inputs[0]}[{i}] > {inputs[1]}[{i}])" if inputs else ""
        raise ModelError(f"{ILL_POSED}{what} {names[i]} has lower bound {float(lo[i])!r} > "
                         f"upper bound {float(hi[i])!r}{suffix}")
    bad = np.flatnonzero(wrong_inf)
    if bad.size:
        i = bad[0]
        raise NonFiniteError(f"{ILL_POSED}{what} {names[i]} has an infinite bound on the "
                             f"wrong side ({where(i)})")


#: offenders listed per kind in one message (the rest are counted)
MAX_LISTED = 5


def _listed(items: list) -> str:
    more = f"; and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return "; ".join(items[:MAX_LISTED]) + more


def check_inputs(lbx, ubx, lbg, ubg, x0, var_names, con_names) -> None:
    """Raise for bad solve inputs, naming every offending component with its index and
    values: NaN bounds, lower > upper, an infinite bound on the wrong side, a NaN/Inf
    x0.  Rule: a user's bad input is an error naming the model's components, like
    CasADi's nlpsol (which raises for lbx > ubx); only the low-level ``solve_nlp``
    answers with IPOPT's status Invalid_Problem_Definition, as IPOPT's C interface
    does.  NonFiniteError when every problem is a non-finite value, else ModelError."""
    found, finite_only = [], True
    for lo, hi, names, what, a, b in ((lbx, ubx, var_names, "variable", "lbx", "ubx"),
                                      (lbg, ubg, con_names, "constraint", "lbg", "ubg")):
        nan, order, wrong_inf = _bound_masks(lo, hi)
        for i in np.flatnonzero(nan | order | wrong_inf):
            why = "a NaN bound" if nan[i] else (
                "an infinite bound on the wrong side" if wrong_inf[i]
                else "lower bound above upper bound")
            finite_only &= bool(nan[i] or wrong_inf[i])
            found.append(f"{what} {names[i]} has {why} ({a}[{i}]={num(lo[i])}, "
                         f"{b}[{i}]={num(hi[i])})")
    bad = np.flatnonzero(~np.isfinite(x0))
    found += [f"variable {var_names[i]} has a non-finite initial value {num(x0[i])} "
              f"(x0[{i}])" for i in bad]
    if found:
        cls = NonFiniteError if finite_only else ModelError
        raise cls(f"invalid solve input: {_listed(found)}")


@dataclass
class NLPModel:
    """A continuous NLP over one expression graph (final)."""

    graph: Graph
    objective: Node
    constraints: list
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    x0: np.ndarray | None = None
    p: np.ndarray | None = None
    var_names: list | None = None
    con_names: list | None = None
    param_names: list | None = None
    sense: int = 1
    source: str = "expr"
    meta: dict = field(default_factory=dict)
    #: pre-grouped input (:mod:`caspar_backend.blocks`): instances add into rows / f
    constraint_blocks: list = field(default_factory=list)
    objective_blocks: list = field(default_factory=list)
    #: row of each flat constraint (default: constraint k is row k); several
    #: instances may add into one row
    constraint_rows: np.ndarray | None = None
    #: number of rows m; default len(constraints), or len(lbg) with blocks/rows
    n_rows: int | None = None
    #: calls of functions evaluated on the host (:class:`caspar_backend.opaque.calls.
    #: OpaqueCalls`): their results are the leaves ``var(n + j)``, ``j < n_aux``
    opaque: object = None

    def __post_init__(self):
        if self.lbx is None or np.ndim(self.lbx) != 1:
            raise ModelError("lbx must be a 1-D array with one entry per variable "
                             f"(got {type(self.lbx).__name__})")
        n = len(self.lbx)
        self.constraints = list(self.constraints)
        pre_grouped = bool(self.constraint_blocks) or self.constraint_rows is not None
        if self.n_rows is None:
            self.n_rows = (len(self.constraints) if not pre_grouped or np.ndim(self.lbg) != 1
                           else len(self.lbg))
        m = self._m = int(self.n_rows)
        self.constraint_rows = (np.arange(len(self.constraints), dtype=np.int64)
                                if self.constraint_rows is None else
                                np.asarray(self.constraint_rows, dtype=np.int64).reshape(-1))
        self.lbx = _vec("lbx", self.lbx, n)
        self.ubx = _vec("ubx", self.ubx, n)
        self.lbg = _vec("lbg", self.lbg, m)
        self.ubg = _vec("ubg", self.ubg, m)
        self.x0 = np.zeros(n) if self.x0 is None else _vec("x0", self.x0, n)
        self.p = np.zeros(0) if self.p is None else np.asarray(self.p, float).reshape(-1).copy()
        if self.var_names is None:
            self.var_names = [f"x[{i}]" for i in range(n)]
        if self.con_names is None:
            self.con_names = [f"g[{i}]" for i in range(m)]
        if self.param_names is None:
            self.param_names = [f"p[{i}]" for i in range(len(self.p))]
        if self.graph.var_names is None:
            self.graph.var_names = self.var_names
        if self.graph.param_names is None:
            self.graph.param_names = self.param_names
        self.validate()

    def __getstate__(self) -> dict:
        """A pickle leaves ``meta`` behind: front ends keep their own objects there
        (the Pyomo mapping, which holds the Pyomo model), which belong to the process
        that built the model and are not needed to solve it."""
        return dict(self.__dict__, meta={})

    @property
    def n(self) -> int:
        return len(self.lbx)

    @property
    def m(self) -> int:
        return self._m

    @property
    def n_params(self) -> int:
        return len(self.p)

    def validate(self) -> None:
        """Raise a :class:`ModelError` naming the first bad component."""
        for lo, hi, names, what in ((self.lbx, self.ubx, self.var_names, "variable"),
                                    (self.lbg, self.ubg, self.con_names, "constraint")):
            check_bounds(lo, hi, names, what)
        bad = np.flatnonzero(~np.isfinite(self.x0))
        if bad.size:
            raise NonFiniteError(f"variable {self.var_names[bad[0]]} has a non-finite "
                                 f"initial value {float(self.x0[bad[0]])!r}")
        bad = np.flatnonzero(~np.isfinite(self.p))
        if bad.size:
            raise NonFiniteError(f"parameter {self.param_names[bad[0]]} has a non-finite "
                                 f"value {float(self.p[bad[0]])!r}")
        for what, roots in (("objective", [self.objective]), ("constraint", self.constraints)):
            for k, r in enumerate(roots):
                if not isinstance(r, Node) or r.graph is not self.graph:
                    raise ModelError(f"{what} {k} is not a node of the model's graph")
        self._validate_rows_and_blocks()
        # the results of opaque calls are leaves var(n + j) (caspar_backend.opaque)
        n = self.n + (self.opaque.n_aux if self.opaque is not None else 0)
        q = self.n_params
        gr = self.graph
        if (gr.leaf_range_ok and gr.max_data_index < 0 and gr.max_var_index < n
                and gr.max_param_index < q):
            return  # every leaf the graph ever made is in range: no walk needed
        roots = [self.objective, *self.constraints]
        if any(_bad_leaf(node, n, q) for node in topo_order(roots)):
            # rare path: find the first offending root so the message can name it
            for label, root in [("objective", self.objective)] + [
                    (self.con_names[r], c) for c, r in zip(self.constraints,
                                                           self.constraint_rows)]:
                node = next((v for v in topo_order([root]) if _bad_leaf(v, n, q)), None)
                if node is None:
                    continue
                if node.op == "data":
                    raise ModelError(f"data leaf in {label}: data leaves belong to pattern "
                                     "templates, not to models")
                kind = "variable" if node.op == "var" else "parameter"
                raise IndexOutOfRangeError(
                    f"{kind} index {node.attr} out of range (n = {n}, {q} parameters) "
                    f"in {label}: {to_str(root, 300)}")

    def _validate_rows_and_blocks(self) -> None:
        m, rows = self.m, self.constraint_rows
        if len(rows) != len(self.constraints):
            raise ModelError(f"{len(rows)} constraint_rows for {len(self.constraints)} "
                             "constraints")
        # blocks sharing their tables (a vector template's components) check them once
        checked = set()

        def first(b):
            key = (id(b.var_table), id(b.param_table), id(b.data_table))
            new = key not in checked
            checked.add(key)
            return new

        for b in self.constraint_blocks:
            if b.rows is None:
                raise ModelError(f"constraint block {b.name} has no rows")
            b.validate(self.n, self.n_params, m, tables=first(b))
        for b in self.objective_blocks:
            b.validate(self.n, self.n_params, None, tables=first(b))
        if rows.size and (rows.min() < 0 or rows.max() >= m):
            raise IndexOutOfRangeError(f"a constraint row index is outside 0..{m - 1}")
        covered = np.zeros(m, dtype=bool)
        covered[rows] = True
        for b in self.constraint_blocks:
            covered[b.rows] = True
        if not covered.all():
            empty = np.flatnonzero(~covered)
            raise ModelError(f"constraint {self.con_names[empty[0]]} (row {empty[0]}) has no "
                             "expression: no flat constraint or block instance adds into it")

    def row_expressions(self, k: int) -> list:
        """The expressions that add into row ``k`` (block instances materialized)."""
        out = [c for c, r in zip(self.constraints, self.constraint_rows) if r == k]
        for b in self.constraint_blocks:
            out += [b.instance(int(i), self.graph) for i in np.flatnonzero(b.rows == k)]
        return out

    def validated_bounds(self, name: str, values=None) -> np.ndarray:
        """The model's bound vector ``name`` ('lbx', 'ubx', 'lbg', 'ubg'), or
        ``values`` checked against its size."""
        own = getattr(self, name)
        if values is None:
            return own
        # NaN and lb > ub are checked with the other bound (check_inputs)
        return _vec(name, values, len(own))

    def describe(self, k: int) -> str:
        """Name and readable expression of constraint ``k``."""
        parts = self.row_expressions(k)
        body = parts[0] if len(parts) == 1 else self.graph.sum(parts)
        return f"{self.con_names[k]}: {to_str(body, 300)}"
