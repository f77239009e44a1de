"""Pattern groups: structurally identical expressions as one SIMD template.

Large models repeat a few expression shapes over an index set.  A
:class:`PatternGroup` is one such shape -- a *template* expression over local
leaves -- plus per-instance tables:

* ``var_table``   int64 (k, N): global variable index of local variable slot j
  in instance i (slot order = first occurrence in a post-order walk);
* ``param_table`` int64 (q, N): global parameter index of local parameter slot j;
* ``data_table``  float64 (r, N): value of data slot j (each edge into a constant
  in the instance gets its own slot, so equal constants never split a group);
* ``rows``        int64 (N,): the constraint each instance is (constraint groups).

The template lives in its own :class:`~caspar_backend.expr.Graph` where local
slots are leaves ``var(j)``, ``param(j)`` and ``data(j)``; the gradient and
lower-triangle Hessian of the template with respect to its local variables are
derived once per group (:mod:`caspar_backend.derivatives`).

Grouping works on flat input by structural hashing (:func:`shape_key`), so it
needs no help from a front-end.  A variable repeated inside one instance is one
local slot (its derivative entries are exact, not duplicated); a Hessian entry
that several instances share appears once per instance in the COO output and
is summed at assembly.

Global COO layout (what :mod:`caspar_backend.evaluators` writes): a group with
N instances and E Jacobian entries owns positions ``[jac_offset, jac_offset +
E*N)``; entry e of instance i sits at ``jac_offset + e*N + i``.  Consecutive
instances write consecutive positions (vectorized slices in NumPy, coalesced
stores on the GPU).  The Hessian COO is laid out the same way from
``hess_offset``.  Objective groups use the same layout for their gradient
entries, which are summed into the dense gradient by variable index.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .derivatives import gradient_and_hessian
from .expr import Graph, Node

_EMPTY_I = np.zeros((0, 0), dtype=np.int64)


def shape_key(root: Node):
    """Structural key of ``root`` plus its instance tables.

    Returns ``(key, var_idx, param_idx, data)`` where ``key`` is hashable and
    equal for two expressions exactly when they are the same template, and
    the lists give the instance's global variable/parameter indices per local
    slot and its constants per data slot.  One iterative post-order pass; this
    runs once per constraint, so it is written for speed.
    """
    local: dict[int, int] = {}
    var_slot: dict[int, int] = {}
    par_slot: dict[int, int] = {}
    data: list[float] = []
    items: list = []

    def leaf_ref(a):
        op = a.op
        if op == "var":
            s = var_slot.get(a.attr)
            if s is None:
                s = var_slot[a.attr] = len(var_slot)
            return ("v", s)
        if op == "const":
            data.append(a.attr)
            return ("c", len(data) - 1)
        s = par_slot.get(a.attr)
        if s is None:
            s = par_slot[a.attr] = len(par_slot)
        return ("p", s)

    def visit(n, depth):
        # recursive post-order (faster than an explicit stack in CPython); deep
        # expressions fall back to the iterative walk below
        if depth > 200:
            return walk(n)
        refs = []
        for a in n.args:
            if a.args:
                r = local.get(a.id)
                refs.append(visit(a, depth + 1) if r is None else r)
            else:
                refs.append(leaf_ref(a))
        local[n.id] = k = len(items)
        items.append((n.op, n.attr, tuple(refs)))
        return k

    def walk(top):
        stack = [top]
        while stack:
            n = stack[-1]
            if n.id in local:
                stack.pop()
                continue
            pending = [a for a in n.args if a.args and a.id not in local]
            if pending:
                stack.extend(reversed(pending))
                continue
            stack.pop()
            refs = tuple(local[a.id] if a.args else leaf_ref(a) for a in n.args)
            local[n.id] = len(items)
            items.append((n.op, n.attr, refs))
        return local[top.id]

    root_ref = visit(root, 0) if root.args else leaf_ref(root)
    key = (tuple(items), root_ref, len(var_slot), len(par_slot), len(data))
    return key, list(var_slot), list(par_slot), data


def build_template(key) -> tuple[Graph, Node]:
    """The template expression of a :func:`shape_key` key, in a fresh graph."""
    items, root_ref, *_ = key
    g = Graph()
    built: list[Node] = []

    def leaf(r):
        kind, s = r
        return {"v": g.var, "p": g.param, "c": g.data}[kind](s)

    for op, attr, args in items:
        a = [built[r] if isinstance(r, int) else leaf(r) for r in args]
        built.append(g.apply(op, *a, attr=attr))
    root = built[root_ref] if isinstance(root_ref, int) else leaf(root_ref)
    return g, root


@dataclass(eq=False)
class PatternGroup:
    """One template and its N instances (final).  See the module docstring for
    the table layouts."""

    kind: str                   # "constraints" or "objective"
    size: int                   # number of instances N
    graph: Graph
    root: Node
    var_table: np.ndarray       # int64 (k, N)
    param_table: np.ndarray     # int64 (q, N)
    data_table: np.ndarray      # float64 (r, N)
    rows: np.ndarray            # int64 (N,) constraint indices (empty for objective)
    grad: list = field(default_factory=list)   # [(local var slot, Node)]
    hess: list = field(default_factory=list)   # [((slot_r, slot_c), Node)], slot_r >= slot_c
    jac_offset: int = 0
    hess_offset: int = 0

    @property
    def n_local_vars(self) -> int:
        return self.var_table.shape[0]

    def derive(self) -> None:
        """Derive the template's gradient and lower-triangle Hessian once."""
        grad, hess = gradient_and_hessian(self.graph, self.root)
        self.grad = sorted(grad.items())
        self.hess = sorted(hess.items())

    def jac_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of this group's Jacobian entries in the module's layout."""
        slots = np.array([s for s, _ in self.grad], dtype=np.int64)
        cols = self.var_table[slots].reshape(-1) if len(slots) else np.zeros(0, np.int64)
        rows = np.tile(self.rows, len(slots))
        return rows, cols

    def grad_index(self) -> np.ndarray:
        """Variable index of each gradient entry (objective groups), same layout."""
        slots = np.array([s for s, _ in self.grad], dtype=np.int64)
        return self.var_table[slots].reshape(-1) if len(slots) else np.zeros(0, np.int64)

    def hess_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of this group's lower-triangle Hessian entries."""
        if not self.hess:
            z = np.zeros(0, np.int64)
            return z, z
        a = np.array([rc[0] for rc, _ in self.hess], dtype=np.int64)
        b = np.array([rc[1] for rc, _ in self.hess], dtype=np.int64)
        ga, gb = self.var_table[a], self.var_table[b]
        return np.maximum(ga, gb).reshape(-1), np.minimum(ga, gb).reshape(-1)


def group_expressions(roots: list[Node], kind: str, rows=None) -> list[PatternGroup]:
    """Group ``roots`` by structural shape (first-seen order of shapes)."""
    buckets: dict = {}
    for i, r in enumerate(roots):
        key, vidx, pidx, data = shape_key(r)
        b = buckets.get(key)
        if b is None:
            b = buckets[key] = ([], [], [], [])
        b[0].append(i)
        b[1].append(vidx)
        b[2].append(pidx)
        b[3].append(data)
    groups = []
    rows = np.arange(len(roots), dtype=np.int64) if rows is None else np.asarray(rows, np.int64)
    for key, (inst, vidx, pidx, data) in buckets.items():
        g, root = build_template(key)
        n_inst = len(inst)
        k, q, r = key[2], key[3], key[4]
        grp = PatternGroup(
            kind=kind, size=n_inst, graph=g, root=root,
            var_table=np.array(vidx, dtype=np.int64).reshape(n_inst, k).T.copy(),
            param_table=np.array(pidx, dtype=np.int64).reshape(n_inst, q).T.copy(),
            data_table=np.array(data, dtype=np.float64).reshape(n_inst, r).T.copy(),
            rows=rows[np.array(inst, dtype=np.int64)] if kind == "constraints"
            else np.zeros(0, np.int64),
        )
        grp.derive()
        groups.append(grp)
    return groups


def block_group(block, kind: str) -> PatternGroup:
    """A :class:`~caspar_backend.blocks.TemplateBlock` as a pattern group (its
    template derived once; the tables are used as given)."""
    rows = block.rows if kind == "constraints" else np.zeros(0, np.int64)
    grp = PatternGroup(kind=kind, size=block.size, graph=block.graph, root=block.root,
                       var_table=block.var_table, param_table=block.param_table,
                       data_table=block.data_table, rows=rows)
    grp.derive()
    return grp


def objective_terms(obj: Node) -> list[Node]:
    """Split a summed objective into terms, each grouped on its own."""
    g = obj.graph
    if obj.op == "sum":
        out = []
        for t in obj.args:
            out.extend(objective_terms(t) if t.op in ("sum", "lincomb") else [t])
        return out
    if obj.op == "lincomb":
        a = obj.args
        return [g.mul(a[k], a[k + 1]) for k in range(0, len(a), 2)]
    return [obj]
