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

Instances (:func:`split_terms`, :func:`constraint_instances`): a summed
objective is grouped term by term when its terms share little
(:data:`SPLIT_MAX_SHARING`); a constraint body is one instance, except a wide sum
(at least :data:`SPLIT_MIN_TERMS` terms) whose terms share little, which is split
into its terms, each adding into the row.  Reason: a template is straight-line
code, so one wide row would be one huge template, while a sum whose terms share
subexpressions would repeat the shared code in every term's template.

Entry order inside a group (:meth:`PatternGroup.jac_structure`,
:meth:`~PatternGroup.hess_structure`, :meth:`~PatternGroup.grad_index`): entry e of
instance i is position ``e*N + i`` of the group's block, so consecutive instances
write consecutive positions (vectorized slices in NumPy, coalesced stores on the
GPU).  Where each group's block starts in the global COO arrays, and how split rows'
duplicate entries are summed, is decided by :mod:`caspar_backend.evaluators.layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .derivatives import gradient, gradient_and_hessian
from .expr import Graph, Node


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
        return post_order_items(top, local, items, leaf_ref)

    root_ref = visit(root, 0) if root.args else leaf_ref(root)
    visit = None        # a recursive closure is a reference cycle: freed now, not by gc
    key = (tuple(items), root_ref, len(var_slot), len(par_slot), len(data))
    return key, list(var_slot), list(par_slot), data


def post_order_items(top: Node, local: dict, items: list, leaf_ref) -> int:
    """Append the non-leaf nodes under ``top`` that ``local`` (node id -> item index)
    does not hold yet to ``items`` as ``(op, attr, refs)`` in post-order (an explicit
    stack: any depth); ``refs`` are item indices, and ``leaf_ref(a)`` for a leaf.
    Returns ``top``'s item index."""
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


def build_template(key) -> tuple[Graph, Node]:
    """The template expression of a :func:`shape_key` key, in a fresh graph."""
    items, root_ref, *_ = key
    g = Graph()
    built: list[Node] = []
    leaves = {"v": g.var, "p": g.param, "c": g.data}
    made: dict = {}         # a leaf used again is looked up, not made again

    def leaf(r):
        n = made.get(r)
        if n is None:
            n = made[r] = leaves[r[0]](r[1])
        return n

    for op, attr, args in items:
        a = tuple([built[r] if isinstance(r, int) else leaf(r) for r in args])
        built.append(g.apply_nodes(op, a, attr))
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

    @property
    def n_local_vars(self) -> int:
        return self.var_table.shape[0]

    def derive(self, hessian: bool = True) -> None:
        """Derive the template's gradient and lower-triangle Hessian once
        (``hessian=False``: the gradient only, what least squares needs; ``hess``
        stays empty)."""
        if hessian:
            grad, hess = gradient_and_hessian(self.graph, self.root)
        else:
            grad, hess = gradient(self.graph, self.root), {}
        self.grad = sorted(grad.items())
        self.hess = sorted(hess.items())

    def jac_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of this group's Jacobian entries, entry e of instance i at
        ``e*N + i`` (int64, 0-based; rows are constraint rows, cols variables)."""
        slots = np.array([s for s, _ in self.grad], dtype=np.int64)
        cols = self.var_table[slots].reshape(-1) if len(slots) else np.zeros(0, np.int64)
        rows = np.tile(self.rows, len(slots))
        return rows, cols

    def grad_index(self) -> np.ndarray:
        """Variable index of each gradient entry (objective groups), entry e of
        instance i at ``e*N + i``."""
        slots = np.array([s for s, _ in self.grad], dtype=np.int64)
        return self.var_table[slots].reshape(-1) if len(slots) else np.zeros(0, np.int64)

    def hess_structure(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols) of this group's lower-triangle Hessian entries (row >= col),
        entry e of instance i at ``e*N + i``."""
        if not self.hess:
            z = np.zeros(0, np.int64)
            return z, z
        a = np.array([rc[0] for rc, _ in self.hess], dtype=np.int64)
        b = np.array([rc[1] for rc, _ in self.hess], dtype=np.int64)
        ga, gb = self.var_table[a], self.var_table[b]
        return np.maximum(ga, gb).reshape(-1), np.minimum(ga, gb).reshape(-1)


def group_expressions(roots: list[Node], kind: str, rows=None,
                      hessian: bool | None = True) -> list[PatternGroup]:
    """Group ``roots`` by structural shape (first-seen order of shapes); ``hessian``:
    see :meth:`PatternGroup.derive` (None: not derived yet)."""
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
        if hessian is not None:
            grp.derive(hessian)
        groups.append(grp)
    return groups


def block_group(block, kind: str, hessian: bool | None = True) -> PatternGroup:
    """A :class:`~caspar_backend.blocks.TemplateBlock` as a pattern group (its
    template derived once, unless ``hessian`` is None; the tables are used as given)."""
    rows = block.rows if kind == "constraints" else np.zeros(0, np.int64)
    grp = PatternGroup(kind=kind, size=block.size, graph=block.graph, root=block.root,
                       var_table=block.var_table, param_table=block.param_table,
                       data_table=block.data_table, rows=rows)
    if hessian is not None:
        grp.derive(hessian)
    return grp


# ================================================================ instances

#: a constraint whose body is a sum of at least this many terms is split into its terms
#: (when they share little, :func:`split_terms`), each grouped on its own and summed
#: into the row: one wide row would otherwise be one huge template (straight-line code
#: per term), compiled and run as one instance.
SPLIT_MIN_TERMS = 8


#: a sum is split only when its terms' operation counts add up to at most this multiple
#: of the sum's own plus one per term.  A subexpression that several terms use is code in
#: each of their templates, so splitting a sum whose terms share a prefix (single
#: shooting: the state after step k holds every step before it) makes the generated code
#: quadratic in the number of terms; kept whole, the shared nodes are code once.  Leaves
#: are loads, not code, and terms share them freely: hence the one per term.  The measured
#: case: docs/grouping-rules.md.
SPLIT_MAX_SHARING = 2.0


def sum_terms(obj: Node, pair=None) -> list:
    """The terms of a sum, nested sums flattened: ``sum`` args, each ``lincomb`` pair
    ``(a_k, b_k)`` as ``pair(a_k, b_k)`` (default: the tuple itself); any other node is
    its own single term."""
    if obj.op == "sum":
        out = []
        for t in obj.args:
            out.extend(sum_terms(t, pair) if t.op in ("sum", "lincomb") else [t])
        return out
    if obj.op == "lincomb":
        a = obj.args
        return [(a[k], a[k + 1]) if pair is None else pair(a[k], a[k + 1])
                for k in range(0, len(a), 2)]
    return [obj]


def objective_terms(obj: Node) -> list[Node]:
    """:func:`sum_terms` with each lincomb pair as the product ``a_k * b_k``."""
    return sum_terms(obj, obj.graph.mul)


def _op_count(roots, limit: float) -> int:
    """Distinct non-leaf nodes reachable from ``roots``; counting stops once it exceeds
    ``limit``."""
    seen, stack, ops = set(), list(roots), 0
    while stack and ops <= limit:
        n = stack.pop()
        if n.id not in seen and n.args:
            seen.add(n.id)
            ops += 1
            stack.extend(n.args)
    return ops


def split_terms(body: Node) -> list[Node]:
    """The terms of a summed ``body`` (:func:`objective_terms`) when they share little
    (:data:`SPLIT_MAX_SHARING`), else its independent parts (:func:`independent_parts`)
    when there are several, else ``[body]``: one template, shared nodes once.  A term
    written twice (one node, twice in the sum) counts once: it is not code that other
    terms share."""
    terms = objective_terms(body)
    if len(terms) < 2:
        return terms
    limit = sharing_limit(_op_count([body], float("inf")), len(terms))
    total = 0
    for t in {t.id: t for t in terms}.values():
        total += _op_count([t], limit - total)
        if total > limit:
            parts = independent_parts(terms)
            # only when no part holds most of the code: a row x_{k+1} - F(x_k, u_k) whose
            # integrator is one part plus a few small terms stays whole (split, it would
            # keep its size and add groups for the small terms)
            biggest = max(_op_count([q], float("inf")) for q in parts)
            return parts if 2 * biggest <= _op_count([body], float("inf")) else [body]
    return terms


def independent_parts(terms: list[Node]) -> list[Node]:
    """``terms`` (of one sum) gathered into the sums of its independent parts: two terms
    are in one part when they share an operation node, directly or through other terms
    of the part (connected components, union-find over the terms).  Parts share no code,
    so each is its own instance -- a multiple-shooting objective, the sum over the
    intervals of an RK4 quadrature whose stages share the interval's states, splits into
    one part per interval (N instances of one template) where its terms, which share
    heavily within an interval, would not split at all.  A part's terms keep their order
    (a part of one term is that term); parts are ordered by their first term.  A sum is
    split into its parts only when none holds more than half its operations
    (:func:`split_terms`)."""
    parent = list(range(len(terms)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict = {}            # operation node id -> a term reaching it
    for k, t in enumerate(terms):
        seen, stack = set(), [t]
        while stack:
            n = stack.pop()
            if n.id in seen or not n.args:
                continue
            seen.add(n.id)
            j = owner.setdefault(n.id, k)
            if j != k:
                a, b = root(j), root(k)
                if a != b:
                    parent[max(a, b)] = min(a, b)
                continue        # below a node another term reached: already joined
            stack.extend(n.args)
    parts: dict = {}
    for k in range(len(terms)):
        parts.setdefault(root(k), []).append(terms[k])
    g = terms[0].graph
    return [p[0] if len(p) == 1 else g.sum(p) for p in parts.values()]


def sharing_limit(body_ops: int, n_terms: int) -> float:
    """The most operations the distinct terms of a sum of ``n_terms`` terms whose body
    has ``body_ops`` distinct operations may count together to be split
    (:data:`SPLIT_MAX_SHARING`)."""
    return SPLIT_MAX_SHARING * (body_ops + n_terms)


def constraint_instances(constraints: list[Node], row_of=None) -> tuple[list, np.ndarray]:
    """``(instances, rows)``: each constraint body, or its terms when it is a wide sum
    (:data:`SPLIT_MIN_TERMS`) of terms that share little (:func:`split_terms`),
    with the row each instance adds into (``row_of[k]``, default k, for constraint k;
    ``rows`` int64)."""
    inst, rows = [], []
    for k, r in enumerate(constraints):
        i = k if row_of is None else int(row_of[k])
        width = len(r.args) // 2 if r.op == "lincomb" else len(r.args)
        if r.op in ("sum", "lincomb") and width >= SPLIT_MIN_TERMS:
            terms = split_terms(r)
            inst += terms
            rows += [i] * len(terms)
        else:
            inst.append(r)
            rows.append(i)
    return inst, np.asarray(rows, dtype=np.int64)
