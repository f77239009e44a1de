"""The bulk SX reader's walks as NumPy passes: the same functions, arguments and results
as :mod:`.sxwalks` (bit for bit; tests/adapters/test_casadi_bulk.py compares them), for
programs too small for the compiled loops to pay for Numba's start (about 0.5-1 s in a
fresh process: :data:`.bulk.COMPILED_MIN_INSTRUCTIONS`).  No Python step per node: one
pass per tree level, pointer jumping, a ruling-set list ranking."""
from __future__ import annotations

import numpy as np

from .mix64 import M1, M2, M3, fmix


def _node(op, ha, hb):
    """:func:`.sxwalks._node` on arrays."""
    return fmix(((op + np.uint64(1)) * M1) ^ (ha * M2)
                ^ (((hb << np.uint64(29)) | (hb >> np.uint64(35))) * M3))


def _distinct(ids: np.ndarray, claim: np.ndarray) -> np.ndarray:
    """``ids`` without repeats (order kept up to which copy survives): each id claims
    a scratch slot, the copy whose claim stands is kept."""
    pos = np.arange(ids.size)
    claim[ids] = pos
    return ids[claim[ids] == pos]


def hash_trees(op, a0, a1, leaf, not_leaf, h, vh, size, bake, bits, roots, max_depth,
               big):
    """:func:`.sxwalks.hash_trees` (same arguments, results and in-place updates) by
    NumPy passes: the inner nodes level by level from the roots, the heights by
    relaxation, the hashes one pass per height."""
    K = op.size
    nodes = roots
    # inner nodes: non-leaves reachable from the terms, top-down, max_depth levels
    inner = np.zeros(K, bool)
    claim = np.full(K, -1, np.int64)      # deduplicates a level without sorting
    front = _distinct(nodes[leaf[nodes] == not_leaf], claim)
    inner[front] = True
    for _ in range(max_depth):
        kids = np.concatenate([a0[front], a1[front]])
        kids = kids[kids >= 0]
        kids = kids[(leaf[kids] == not_leaf) & ~inner[kids]]
        if not kids.size:
            break
        front = _distinct(kids, claim)
        inner[front] = True
    ids = np.flatnonzero(inner)
    # heights and tree sizes; an unvisited non-leaf argument is 'deep'
    height = np.zeros(K, np.int64)           # (size arrives as the leaf indicator)
    deep = (leaf == not_leaf) & ~inner
    height[deep] = big
    size[deep] = big
    b0, b1 = a0[ids], a1[ids]
    has1 = b1 >= 0
    b1c = np.where(has1, b1, b0)
    # bottom-up: a node's height is final once both arguments' are (leaves and deep
    # nodes are); each pass touches only the nodes still pending
    final = ~inner
    pend = np.arange(ids.size)
    while pend.size:
        ready = final[b0[pend]] & final[b1c[pend]]
        r = pend[ready]
        if not r.size:
            break
        height[ids[r]] = np.minimum(1 + np.maximum(height[b0[r]],
                                                   np.where(has1[r], height[b1c[r]], 0)),
                                    big)
        final[ids[r]] = True
        pend = pend[~ready]
    # heights above max_depth are not hashed: as uint8 the sort is a radix sort
    order = np.argsort(np.minimum(height[ids], max_depth + 1).astype(np.uint8),
                       kind="stable")
    ids, b0, b1c, has1 = ids[order], b0[order], b1c[order], has1[order]
    hs = height[ids]
    cut = np.searchsorted(hs, np.arange(1, max_depth + 2))
    bake = bake[ids]
    ops = op[ids].astype(np.uint64)
    lo = 0
    for hi in cut.tolist():
        if hi <= lo:
            continue
        s = slice(lo, hi)
        ha = h[b0[s]]
        hb = np.where(has1[s], h[b1c[s]], np.uint64(0))
        hb = np.where(bake[s], fmix(bits[b1c[s]] ^ M3), hb)
        h[ids[s]] = _node(ops[s], ha, hb)
        vh[ids[s]] = _node(ops[s], vh[b0[s]], np.where(has1[s], vh[b1c[s]], np.uint64(0)))
        size[ids[s]] = np.minimum(size[b0[s]] + np.where(has1[s], size[b1c[s]], 0), big)
        lo = hi
    return inner, height


def chain_heads(user, fused):
    """:func:`.sxwalks.chain_heads` by pointer jumping (NumPy)."""
    K = user.size
    head = np.arange(K)
    live = np.flatnonzero(fused)
    head[live] = user[live]
    while live.size:                                # pointer jumping to the head
        nxt = head[head[live]]
        moved = nxt != head[live]
        head[live] = nxt
        live = live[moved]
    return head


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


def spine_tour(op, a0, a1, tree, sp, tops, add, sub, neg):
    """:func:`.sxwalks.spine_tour` (same arguments and results) by NumPy passes: the
    Euler tour of the spine forest as successor lists, ranked by a ruling set
    (:func:`_rank`)."""
    K = op.size
    two = (op[sp] == add) | (op[sp] == sub)
    # events: enter(k) = 2*j, exit(k) = 2*j+1 for spine node j = pos[k]; term items
    # (k, slot) after them: 2*S + item index
    S = sp.size
    pos = np.full(K, -1, np.int64)
    pos[sp] = np.arange(S)
    kid0, kid1 = a0[sp], np.where(two, a1[sp], -1)
    sgn0 = op[sp] == neg
    sgn1 = op[sp] == sub
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


def single_writes(w, a, b):
    """:func:`.sxwalks.single_writes` (same results) by NumPy passes."""
    K = w.size
    wk = np.flatnonzero(w >= 0)
    size = int(max(w.max(), a.max(), b.max())) + 1 if K else 0
    writer = np.full(size, -1, np.int64)
    writer[w[wk]] = wk
    none = np.full(K, -1, np.int64)
    if np.count_nonzero(writer >= 0) != wk.size:
        return False, none, none         # a slot written twice: resolve by sorting
    args = []
    for r in (a, b):
        src = np.where(r >= 0, writer[np.maximum(r, 0)], -1)
        if np.any((r >= 0) & ((src < 0) | (src >= np.arange(K)))):
            return False, none, none     # read before written: the sort path decides
        args.append(src)
    return True, args[0], args[1]


def claims_hold(op, leaf, attr, bits, a0, a1, vh, M, F):
    """:func:`.sxwalks.claims_hold` by NumPy passes over the (L, N) positions."""
    L, N = M.shape
    cols = np.arange(N)
    src = M[F, cols[None, :]]
    ok = op[M] == op[src]
    ok &= leaf[M] == leaf[src]
    ok &= attr[M] == attr[src]
    ok &= bits[M] == bits[src]
    for arg in (a0, a1):
        x, y = arg[M], arg[src]
        ok &= (x < 0) == (y < 0)
        ok &= vh[np.maximum(x, 0)] == vh[np.maximum(y, 0)]
    return bool(ok.all())


def first_of_each(key):
    """An index of one occurrence of each distinct value of ``key`` (uint64), as
    :func:`.sxwalks.first_of_each` gives them up to order (the first occurrences, in
    key order)."""
    return np.unique(key, return_index=True)[1]
