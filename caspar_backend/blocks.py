"""Pre-grouped model input: N instances of one template, given as tables.

A front-end that already knows a repeated structure (a CasADi ``Function.map``,
an ExaModels-style generator, a Pyomo rule over a large index set) can hand it
over without building N expression trees:

    g_{rows[i]}  +=  T( x[var_table[:, i]], p[param_table[:, i]], data_table[:, i] ),
                     i = 0 .. N-1

where ``T`` is a template expression in its own :class:`~caspar_backend.expr.Graph`
whose leaves are ``var(j)`` (local variable slot j), ``param(j)`` and ``data(j)``.
Tables: ``var_table`` int64 (k, N), ``param_table`` int64 (q, N), ``data_table``
float64 (r, N), ``rows`` int64 (N,) (constraint blocks; objective blocks add their
instances to f).  Several instances, flat or from blocks, may add into one row.

Such a block becomes one :class:`~caspar_backend.patterns.PatternGroup` directly
(the template is derived once), so model size costs only the tables.  An
instance that uses one global variable in two slots would need its Hessian's
off-diagonal slot pair counted twice on the diagonal; those (rare) instances are
materialized as ordinary expressions and grouped like flat input instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import IndexOutOfRangeError, ModelError, NonFiniteError
from .expr import Graph, Node, to_str, topo_order
from .rebuild import rebuild


def _table(name, a, dtype, N=None):
    t = np.asarray(a, dtype=dtype)
    if t.ndim == 1 and t.size == 0:
        t = t.reshape(0, 0 if N is None else N)
    if t.ndim != 2:
        raise ModelError(f"template block: {name} must be 2-D (slots x instances), "
                         f"got shape {t.shape}")
    return np.ascontiguousarray(t)


def _leaves_in_range(g: Graph, slots: dict) -> bool:
    """Every leaf ``g`` ever made is inside ``slots`` (the tables' slot counts by leaf
    kind): the graph's index ranges (:class:`~caspar_backend.expr.Graph`), no walk.  A
    template graph (a fresh one per template) holds only its template's leaves, so
    this settles the check; where it does not hold, the template is walked."""
    return (g.leaf_range_ok and g.max_var_index < slots["var"]
            and g.max_param_index < slots["param"] and g.max_data_index < slots["data"])


@dataclass(eq=False)
class TemplateBlock:
    """N instances of one template expression (final).  See the module docstring."""

    graph: Graph
    root: Node
    var_table: np.ndarray
    param_table: np.ndarray | None = None
    data_table: np.ndarray | None = None
    rows: np.ndarray | None = None
    name: str = "block"
    #: where :class:`~caspar_backend.problem.Problem` puts the block's pattern group:
    #: False (the default), after the groups of the model's expression rows; True, among
    #: them by its first row -- where the same rows given as expressions would have put
    #: it (the Pyomo template reader's blocks, so that reading a model either way gives
    #: one layout).  The order of groups is the order of the sums a solve runs, so a
    #: front end keeps the placement its earlier layouts had.
    placed_by_row: bool = False
    #: the builder's promise that every instance's variable slots are distinct and
    #: inside the model's variables and parameters (tables a caspar front end computed
    #: from indices it checked, e.g. the bundle adjuster's pose and point offsets): the
    #: index-range and repeated-variable passes over the tables are skipped; data and
    #: rows are still checked
    checked_indices: bool = False

    def __post_init__(self):
        self.var_table = _table("var_table", self.var_table, np.int64)
        N = self.var_table.shape[1]
        self.param_table = _table("param_table", np.zeros((0, N)) if self.param_table is None
                                  else self.param_table, np.int64, N)
        self.data_table = _table("data_table", np.zeros((0, N)) if self.data_table is None
                                 else self.data_table, np.float64, N)
        if self.rows is not None:
            self.rows = np.asarray(self.rows, dtype=np.int64).reshape(-1)
        for nm, t in (("param_table", self.param_table), ("data_table", self.data_table)):
            if t.shape[1] != N:
                raise ModelError(f"template block {self.name}: {nm} has {t.shape[1]} "
                                 f"instances, var_table has {N}")
        if self.rows is not None and len(self.rows) != N:
            raise ModelError(f"template block {self.name}: {len(self.rows)} rows for {N} "
                             "instances")
        if not isinstance(self.root, Node) or self.root.graph is not self.graph:
            raise ModelError(f"template block {self.name}: root is not a node of its graph")
        slots = {"var": self.var_table.shape[0], "param": self.param_table.shape[0],
                 "data": self.data_table.shape[0]}
        if _leaves_in_range(self.graph, slots):
            return
        for n in topo_order([self.root]):
            if n.op in slots and not 0 <= n.attr < slots[n.op]:
                raise IndexOutOfRangeError(
                    f"template block {self.name}: {n.op}({n.attr}) but the {n.op} table has "
                    f"{slots[n.op]} slots, in {to_str(self.root, 200)}")

    @property
    def size(self) -> int:
        return self.var_table.shape[1]

    def validate(self, n: int, q: int, m: int | None, tables: bool = True) -> None:
        """Index ranges against a model with n variables, q parameters, m rows;
        ``tables=False``: the rows only (the caller checked these very tables already,
        for another block sharing them -- a vector template's components)."""
        for what, t, hi in (("variable", self.var_table, n), ("parameter", self.param_table, q)):
            if not tables or self.checked_indices:
                break
            # one pass: a negative index read as unsigned is above any bound
            if t.size and int(t.view(np.uint64).max()) >= hi:
                bad = int(np.flatnonzero((t < 0) | (t >= hi))[0])
                j, i = divmod(bad, t.shape[1])
                raise IndexOutOfRangeError(
                    f"template block {self.name}, instance {i}: {what} index {int(t[j, i])} "
                    f"out of range ({hi}) in slot {j} of {to_str(self.root, 200)}")
        if tables and not np.all(np.isfinite(self.data_table)):
            j, i = np.argwhere(~np.isfinite(self.data_table))[0]
            raise NonFiniteError(f"template block {self.name}, instance {i}: data slot {j} "
                                 f"is {float(self.data_table[j, i])!r}")
        if m is not None and self.rows is not None and self.rows.size and (
                self.rows.min() < 0 or self.rows.max() >= m):
            raise IndexOutOfRangeError(f"template block {self.name}: a row index is outside "
                                       f"0..{m - 1}")

    def repeated_var_instances(self) -> np.ndarray:
        """Instances whose variable slots are not all distinct (sorted indices)."""
        vt = self.var_table
        k = vt.shape[0]
        if k < 2 or self.checked_indices:
            return np.zeros(0, dtype=np.int64)
        N = vt.shape[1]
        if N <= 8:
            # a handful of instances (most blocks of a bulk-read model): one set per
            # instance costs less than any array call
            return np.array([i for i, col in enumerate(vt.T.tolist()) if len(set(col)) < k],
                            dtype=np.int64)
        if k <= 16 and N > 256:
            # many instances, few slots: each slot compared with those before it, k - 1
            # passes over N (sorting N short columns costs more per instance)
            rep = np.zeros(N, dtype=bool)
            for a in range(1, k):
                rep |= np.any(vt[:a] == vt[a], axis=0)
            return np.flatnonzero(rep)
        s = np.sort(vt, axis=0)            # a repeat: two equal neighbours in a column
        return np.flatnonzero(np.any(s[1:] == s[:-1], axis=0))

    def instance(self, i: int, target: Graph) -> Node:
        """Instance ``i`` as an ordinary expression in ``target``."""
        vt, pt, dt = self.var_table[:, i], self.param_table[:, i], self.data_table[:, i]
        image = {"var": lambda v: target.var(int(vt[v.attr])),
                 "param": lambda v: target.param(int(pt[v.attr])),
                 "data": lambda v: target.const(float(dt[v.attr])),
                 "const": lambda v: target.const(v.attr)}
        return rebuild([self.root], target, lambda v: image[v.op](v))[0]

    def subset(self, keep: np.ndarray) -> "TemplateBlock":
        """The block restricted to instances ``keep``."""
        return TemplateBlock(self.graph, self.root, self.var_table[:, keep],
                             self.param_table[:, keep], self.data_table[:, keep],
                             None if self.rows is None else self.rows[keep], self.name,
                             self.placed_by_row, self.checked_indices)
