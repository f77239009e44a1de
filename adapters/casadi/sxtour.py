"""The Euler tour of a spine forest: each tree's items in depth-first order.

A *spine* (:mod:`.sxterms`) is a tree of ADD, SUB and NEG nodes over its *items*.
The tour visits ``enter(k)``, the items and subtrees of k's arguments in order, then
``exit(k)``; its order is the per-node reader's depth-first order of the items.
Ranking the tour (the distance of every event to its tree's last one, by a ruling
set: :func:`_rank`) gives, with no step per tree level,

* the items of every tree in order (sorted by tree, then by falling distance);
* each item's *parity* (odd where the path from the top goes through an odd number
  of NEG or subtrahend edges): the xor of the edge flips from the event to the end
  of the tour, as closed subtrees cancel;
* every spine node's top and the span of its subtree in the tour.
"""

from __future__ import annotations

import numpy as np

from . import optable as T
from .sxdag import SXDag

_ADD, _SUB, _NEG = (T.CODES[k] for k in ("OP_ADD", "OP_SUB", "OP_NEG"))


#: list ranking: one ruler every this many events
_RULER = 32


def _rank(nxt: np.ndarray, w: np.ndarray):
    """List ranking of the lists ``e -> nxt[e]`` (-1 ends a list): ``(dist, x, end)``,
    the number of steps from each element to its list's last one, the xor of ``w``
    over the elements from it to the last (both included), and that last element.

    A ruling set: about one element in _RULER, the heads and the last elements are
    rulers; each ruler walks to the next (one NumPy step per position, all rulers at
    once: about _RULER steps), the rulers' own list is ranked by pointer jumping,
    and every element adds its offset from its ruler.  O(E) work."""
    E = nxt.size
    idx = np.arange(E)
    last = nxt < 0
    has_pred = np.zeros(E, bool)
    has_pred[nxt[~last]] = True
    # rulers spread by a hash of the index (a stride could miss a whole list whose
    # elements are spaced by a multiple of it): gaps of about _RULER, at most a few
    # hundred
    with np.errstate(over="ignore"):
        mixed = (idx.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
    ruler = (mixed % np.uint64(_RULER) == 0) | last | ~has_pred
    r = np.flatnonzero(ruler)
    owner = np.full(E, -1, np.int64)
    off = np.zeros(E, np.int64)
    px = np.zeros(E, bool)                  # xor of w from the ruler up to e, e excluded
    owner[r] = np.arange(r.size)
    walker = np.arange(r.size)
    cur = r.copy()
    run_x = w[r].copy()
    step = np.zeros(r.size, np.int64)
    r_next = np.full(r.size, -1, np.int64)  # the next ruler (element id), -1: none
    gap = np.zeros(r.size, np.int64)        # steps to it
    gap_x = np.zeros(r.size, bool)          # xor of w over [ruler, next ruler)
    while walker.size:
        nx = nxt[cur]
        stop = (nx < 0) | ruler[np.maximum(nx, 0)]
        ws = walker[stop]
        r_next[ws] = nx[stop]
        gap[ws] = step[stop] + 1
        gap_x[ws] = run_x[stop]
        keep = ~stop
        walker, cur, nx = walker[keep], cur[keep], nx[keep]
        step, run_x = step[keep] + 1, run_x[keep]
        owner[nx] = walker
        off[nx] = step
        px[nx] = run_x
        run_x = run_x ^ w[nx]
        cur = nx
    # the rulers' list: weights gap / gap_x, pointer jumping
    rid = np.full(E, -1, np.int64)
    rid[r] = np.arange(r.size)
    rn = np.where(r_next >= 0, rid[np.maximum(r_next, 0)], -1)
    d = np.where(rn >= 0, gap, 0)
    x = np.where(rn >= 0, gap_x, w[r])
    end = np.where(rn >= 0, rn, np.arange(r.size))
    live = np.flatnonzero(rn >= 0)
    jump = rn.copy()
    while live.size:
        j = jump[live]
        d[live] += d[j]
        x[live] ^= x[j]
        end[live] = end[j]
        jump[live] = jump[j]
        live = live[jump[live] >= 0]
    o = owner
    dist = d[o] - off
    xacc = x[o] ^ px
    return dist, xacc, r[end[o]]


def dfs_order(dag: SXDag, spine: np.ndarray, tree: np.ndarray, tops: np.ndarray):
    """The terms under spine tops ``tops`` in depth-first order.

    ``tree``: the spine nodes that are subtrees of their (one) spine parent; every
    other argument of a spine node is an item (a term).  Returns ``(top, node,
    parity, top_of)``: int64/int64/bool arrays of the items, grouped by top in the
    order of ``tops``, each group in depth-first order (first argument first), and
    int64 (K,) the top of every spine node (-1 elsewhere).  An Euler tour of the
    spine forest ranked by :func:`_rank`: no step per tree level."""
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    K = op.size
    sp = np.flatnonzero(spine)
    two = (op[sp] == _ADD) | (op[sp] == _SUB)
    # events: enter(k) = 2*j, exit(k) = 2*j+1 for spine node j = pos[k]; term items
    # (k, slot) after them: 2*S + item index
    S = sp.size
    pos = np.full(K, -1, np.int64)
    pos[sp] = np.arange(S)
    kid0, kid1 = a0[sp], np.where(two, a1[sp], -1)
    sgn0 = op[sp] == _NEG
    sgn1 = op[sp] == _SUB
    is_t0 = ~tree[kid0]
    is_t1 = two & ~tree[np.maximum(kid1, 0)]
    t0 = np.flatnonzero(is_t0)                       # spine index j with a term in slot 0
    t1 = np.flatnonzero(is_t1)
    n_t0 = t0.size
    item0 = np.full(S, -1, np.int64)
    item0[t0] = 2 * S + np.arange(n_t0)
    item1 = np.full(S, -1, np.int64)
    item1[t1] = 2 * S + n_t0 + np.arange(t1.size)
    E = 2 * S + n_t0 + t1.size
    first0 = np.where(is_t0, item0, 2 * pos[kid0])   # first event of slot 0
    first1 = np.where(~two, -1, np.where(is_t1, item1, 2 * pos[np.maximum(kid1, 0)]))
    after0 = np.where(two, first1, 2 * np.arange(S) + 1)   # what follows slot 0
    nxt = np.full(E, -1, np.int64)
    nxt[0:2 * S:2] = first0                          # enter(k) -> slot 0
    nxt[item0[t0]] = after0[t0]                      # term in slot 0 -> slot 1 / exit
    nxt[item1[t1]] = 2 * t1 + 1                      # term in slot 1 -> exit(k)
    # exit(child) -> what follows the child's slot in its parent; tops: terminal
    ch0 = np.flatnonzero(~is_t0)
    ch1 = np.flatnonzero(two & ~is_t1)
    nxt[2 * pos[kid0[ch0]] + 1] = after0[ch0]
    nxt[2 * pos[kid1[ch1]] + 1] = 2 * ch1 + 1
    # parity: every NEG / subtrahend edge flips; enter(c) and exit(c) of a child c
    # both carry its edge's flip, so the xor of the flips from an event to the end of
    # the tour is the parity of the path from the top to it (closed subtrees cancel)
    # (items are single events: their own flip is added after the ranking)
    flip = np.zeros(E, bool)
    for ch, kid, sg in ((ch0, kid0, sgn0), (ch1, kid1, sgn1)):
        j = pos[kid[ch]]
        flip[2 * j] = sg[ch]
        flip[2 * j + 1] = sg[ch]
    dist, xacc, end = _rank(nxt, flip)
    item_node = np.concatenate([kid0[t0], kid1[t1]])
    item_ev = np.concatenate([item0[t0], item1[t1]])
    acc = xacc[1:2 * S:2]           # parity of each spine node (its exit: own edge too)
    item_host = np.concatenate([t0, t1])            # spine index holding the item
    parity = xacc[item_ev] ^ np.concatenate([sgn0[t0], sgn1[t1]])
    top_ev = end[item_ev]                           # exit(top) = 2*pos[top] + 1
    top_node = sp[(top_ev - 1) // 2]
    rank_in_tops = np.full(K, -1, np.int64)
    rank_in_tops[tops] = np.arange(tops.size)
    tr = rank_in_tops[top_node]
    keep = tr >= 0
    order = np.lexsort((-dist[item_ev][keep], tr[keep]))
    top_of = np.full(K, -1, np.int64)
    top_of[sp] = sp[(end[0:2 * S:2] - 1) // 2]
    # where each spine node's items lie in that order: its subtree is the part of its
    # tree's tour between enter(k) and exit(k)
    span = np.full((K, 3), -1, np.int64)
    span[sp, 0] = dist[0:2 * S:2]
    span[sp, 1] = dist[1:2 * S:2]
    span[sp, 2] = acc                               # parity of the node from its top
    host = sp[item_host]
    return (top_node[keep][order], item_node[keep][order], parity[keep][order], top_of,
            span, dist[item_ev][keep][order], host[keep][order])
