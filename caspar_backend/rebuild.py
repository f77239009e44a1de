"""Copying expressions from one :class:`~caspar_backend.expr.Graph` into another.

``rebuild(roots, target, leaf)`` visits the nodes under ``roots`` in topological order
and applies each non-leaf node's op to the images of its arguments in ``target``; a
leaf (``var``, ``param``, ``data``, ``const``) is mapped by ``leaf(node)``.  The target
graph simplifies and hash-conses as it builds, so a leaf mapped to a constant folds.
Used wherever expressions change graph: template instances materialized as flat
expressions (:mod:`.blocks`), parameters turned into variables (:mod:`.passes`), the
CasADi adapter's template blocks.
"""

from __future__ import annotations

from typing import Callable

from .expr import Graph, Node, topo_order


def rebuild(roots: list[Node], target: Graph, leaf: Callable[[Node], Node]) -> list[Node]:
    """Copies of ``roots`` in ``target``; ``leaf(node)`` gives each leaf's image.
    Simplification runs again in ``target`` (a leaf mapped to a constant folds)."""
    image: dict[int, Node] = {}
    for n in topo_order(roots):
        if n.args:
            image[n.id] = target.apply(n.op, *(image[a.id] for a in n.args), attr=n.attr)
        else:
            image[n.id] = leaf(n)
    return [image[r.id] for r in roots]
