"""The Euler tour of a spine forest: each tree's items in depth-first order.

A *spine* (:mod:`.sxterms`) is a tree of ADD, SUB and NEG nodes over its *items*.
The tour visits ``enter(k)``, the items and subtrees of k's arguments in order, then
``exit(k)``; its order is the per-node reader's depth-first order of the items.
One compiled depth-first walk per tree (:func:`.sxwalks.spine_tour`) gives

* the items of every tree in order (sorted by tree, then by falling distance);
* each item's *parity* (odd where the path from the top goes through an odd number
  of NEG or subtrahend edges): the xor of the edge flips from the event to the end
  of the tour, as closed subtrees cancel;
* every spine node's top and the span of its subtree in the tour.
"""

from __future__ import annotations

import numpy as np

from . import optable as T
from .sxdag import SXDag, walks

_ADD, _SUB, _NEG = (T.CODES[k] for k in ("OP_ADD", "OP_SUB", "OP_NEG"))


def dfs_order(dag: SXDag, spine: np.ndarray, tree: np.ndarray, tops: np.ndarray):
    """The terms under spine tops ``tops`` in depth-first order.

    ``tree``: the spine nodes that are subtrees of their (one) spine parent; every
    other argument of a spine node is an item (a term).  Returns ``(top, node,
    parity, top_of)``: int64/int64/bool arrays of the items, grouped by top in the
    order of ``tops``, each group in depth-first order (first argument first), and
    int64 (K,) the top of every spine node (-1 elsewhere).  An Euler tour of the
    spine forest walked by :func:`.sxwalks.spine_tour` (or its NumPy version).

    Also returned: ``span`` int64 (K, 3), for each spine node the ``dist`` of its
    enter and exit events and its parity from its top (-1 rows elsewhere), and per
    item its ``dist`` (events after it in its tree's tour) and host spine node."""
    sp = np.flatnonzero(spine)
    return walks(dag.compiled).spine_tour(dag.op, dag.arg0, dag.arg1, tree, sp, np.asarray(tops, np.int64),
                      _ADD, _SUB, _NEG)
