"""Symbolic first and second derivatives with exact structural sparsity.

For a scalar expression ``e(x)`` in a :class:`~caspar_backend.expr.Graph`,
every node ``v_k = phi_k(u_1, ..., u_r)`` has partials ``d1_i = dphi/du_i``
and second partials ``d2_ij`` (the op table, :mod:`caspar_backend.ops`).

* Reverse mode gives the adjoints ``abar_k = de/dv_k`` as expressions:
  ``abar_root = 1`` and ``abar_u += abar_k * d1_i`` for every argument ``u``
  of ``v_k``; the gradient is the adjoint of each variable leaf.
* Forward mode gives each node's sparse gradient ``grad v_k`` (a dict from
  variable to expression), ``grad v_k = sum_i d1_i grad u_i``.
* The Hessian is the classic second-order adjoint sum

      H = sum_k abar_k  sum_{i,j} d2_ij  (grad u_i)(grad u_j)^T ,

  which needs nothing but the table's ``d1`` and ``d2``.  An entry exists only
  where some node has a non-zero second partial between two arguments that
  both depend on the entry's variables -- linear ops (add, sum, lincomb with
  constant coefficients, neg) contribute nothing -- so the sparsity is exact,
  not a dense blow-up.

All results are nodes of the same graph, so hash-consing shares every common
subexpression between value, gradient and Hessian.  Only the lower triangle
``(r, c)`` with ``r >= c`` of the Hessian is returned.
"""

from __future__ import annotations

from . import ops as _ops
from .expr import Graph, Node, topo_order


def _active(order: list[Node]) -> set[int]:
    """Ids of nodes that depend on at least one variable."""
    act: set[int] = set()
    for n in order:
        if n.op == "var" or any(a.id in act for a in n.args):
            act.add(n.id)
    return act


def _guarded(order: list[Node]) -> set[int]:
    """Ids of nodes below a value argument of an ``if_else`` (inside a branch)."""
    guard: set[int] = set()
    for n in reversed(order):
        if n.op == "if_else":
            guard.add(n.args[1].id)
            guard.add(n.args[2].id)
        if n.id in guard:
            guard.update(a.id for a in n.args)
    return guard


def _safe(g: Graph, a: Node, c: Node) -> Node:
    """``c`` where the adjoint ``a`` is non-zero, else exactly 0.

    Inside an untaken ``if_else`` branch the adjoint is exactly 0 but partials
    may be NaN (``sqrt`` of a negative number, say); IEEE gives 0 * NaN = NaN,
    CasADi gives 0.  Selecting keeps CasADi's convention.
    """
    return g.if_else(a, c, g.const(0.0))


def adjoints(g: Graph, root: Node) -> tuple[list[Node], set[int], dict[int, Node]]:
    """Reverse sweep: ``(order, active ids, adjoint node per active node id)``.

    ``if_else(c, a, b)`` passes its adjoint to the taken branch only, as a
    select, and contributions inside branches go through :func:`_safe`.
    """
    order = topo_order([root])
    act = _active(order)
    guard = _guarded(order)
    zero = g.const(0.0)
    terms: dict[int, list[Node]] = {root.id: [g.const(1.0)]}
    adj: dict[int, Node] = {}
    for n in reversed(order):
        t = terms.pop(n.id, None)
        if t is None or n.id not in act:
            continue
        a = t[0] if len(t) == 1 else g.sum(t)
        if a.op == "const" and a.attr == 0.0:
            continue
        adj[n.id] = a
        if n.op == "var":
            continue
        if n.op == "if_else":
            c, ua, ub = n.args
            for u, t in ((ua, g.if_else(c, a, zero)), (ub, g.if_else(c, zero, a))):
                if u.id in act:
                    terms.setdefault(u.id, []).append(t)
            continue
        spec = _ops.OPS[n.op]
        for i, u in enumerate(n.args):
            if u.id in act:
                c = g.mul(a, spec.d1(g, n, i))
                if c.op == "const" and c.attr == 0.0:
                    continue
                terms.setdefault(u.id, []).append(_safe(g, a, c) if n.id in guard else c)
    return order, act, adj


def gradient(g: Graph, root: Node) -> dict[int, Node]:
    """``{variable index: d root / d x_index}`` for the variables ``root``
    depends on (structurally non-zero entries only)."""
    order, act, adj = adjoints(g, root)
    return {n.attr: adj[n.id] for n in order if n.op == "var" and n.id in adj}


def gradient_and_hessian(g: Graph, root: Node) -> tuple[dict[int, Node], dict[tuple[int, int], Node]]:
    """Gradient as in :func:`gradient` and the lower-triangle Hessian
    ``{(r, c): d2 root / dx_r dx_c}`` with ``r >= c`` (variable indices)."""
    order, act, adj = adjoints(g, root)
    guard = _guarded(order)
    zero = g.const(0.0)
    grad = {n.attr: adj[n.id] for n in order if n.op == "var" and n.id in adj}

    # forward sparse gradients of active nodes (only needed below nodes with d2)
    fwd: dict[int, dict[int, Node]] = {}
    for n in order:
        if n.id not in act:
            continue
        if n.op == "var":
            fwd[n.id] = {n.attr: g.const(1.0)}
            continue
        if n.op == "if_else":  # select, so a NaN in the untaken branch stays there
            c, ua, ub = n.args
            fa = fwd.get(ua.id, {}) if ua.id in act else {}
            fb = fwd.get(ub.id, {}) if ub.id in act else {}
            fwd[n.id] = {v: g.if_else(c, fa.get(v, zero), fb.get(v, zero))
                         for v in sorted(set(fa) | set(fb))}
            continue
        spec = _ops.OPS[n.op]
        acc: dict[int, list[Node]] = {}
        for i, u in enumerate(n.args):
            if u.id not in act:
                continue
            d = spec.d1(g, n, i)
            if d.op == "const" and d.attr == 0.0:
                continue
            for v, e in fwd[u.id].items():
                acc.setdefault(v, []).append(g.mul(d, e))
        fwd[n.id] = {v: (t[0] if len(t) == 1 else g.sum(t)) for v, t in acc.items()}

    hterms: dict[tuple[int, int], list[Node]] = {}
    for n in order:
        a = adj.get(n.id)
        if a is None or n.op == "var":
            continue
        d2 = _ops.OPS[n.op].d2(g, n)
        for (i, j), dij in d2.items():
            ui, uj = n.args[i], n.args[j]
            if ui.id not in act or uj.id not in act:
                continue
            if dij.op == "const" and dij.attr == 0.0:
                continue
            w = g.mul(a, dij)
            fi, fj = fwd[ui.id], fwd[uj.id]
            if n.id in guard:
                # inside an if_else branch: a zero adjoint must give a zero term
                fi = {v: _safe(g, a, e) for v, e in fi.items()}
                fj = fi if i == j else {v: _safe(g, a, e) for v, e in fj.items()}
                w = _safe(g, a, w)
            if i == j:
                # (grad u)(grad u)^T, lower triangle
                items = list(fi.items())
                for p, (va, ea) in enumerate(items):
                    for vb, eb in items[: p + 1]:
                        key = (va, vb) if va >= vb else (vb, va)
                        hterms.setdefault(key, []).append(g.mul(w, g.mul(ea, eb)))
            else:
                # (grad u_i)(grad u_j)^T + (grad u_j)(grad u_i)^T, lower triangle
                for va, ea in fi.items():
                    for vb, eb in fj.items():
                        key = (va, vb) if va >= vb else (vb, va)
                        c = g.mul(w, g.mul(ea, eb))
                        hterms.setdefault(key, []).append(g.add(c, c) if va == vb else c)
    hess = {}
    for key, t in hterms.items():
        h = t[0] if len(t) == 1 else g.sum(t)
        if not (h.op == "const" and h.attr == 0.0):
            hess[key] = h
    return grad, hess
