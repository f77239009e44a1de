"""The compiled loops of the bulk SX reader: walks of an :class:`~.sxdag.SXDag` in
instruction order.

A DAG's node ids are instruction indices and every argument precedes its user
(``arg0[k] < k``, ``arg1[k] < k``), so one loop forward visits arguments before users
and one loop backward visits users before arguments -- what the NumPy versions did by
one pass per tree level, by pointer jumping or by ranking an Euler tour, each loop
does in O(K) steps.

Compiled by Numba once per machine (``cache=True``); importing this module compiles
nothing.  Each replaced a NumPy version inside :func:`.sxhash.term_hashes`,
:func:`.sxchains.sum_chains`, :func:`.sxtour.dfs_order`, :mod:`.sxdag` and :mod:`.sxgroup`
and was checked equal to it bit for bit (all intermediate arrays) on the SX AC-OPF and
Rosenbrock programs.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .mix64 import M1, M2, M3, fmix

_fmix = njit(cache=True, nogil=True, inline="always")(fmix)    # .mix64's, compiled


@njit(cache=True, nogil=True, inline="always")
def _node(op, ha, hb):
    """The hash of a node of op ``op`` (uint64) over argument hashes ``ha``, ``hb`` (0:
    unary), argument order kept."""
    return _fmix(((op + np.uint64(1)) * M1) ^ (ha * M2)
                 ^ (((hb << np.uint64(29)) | (hb >> np.uint64(35))) * M3))


@njit(cache=True, nogil=True)
def hash_trees(op, a0, a1, leaf, not_leaf, h, vh, size, bake, bits, roots, max_depth,
               big):
    """Shape and value hashes of the trees under ``roots`` (int64 node ids), in place.

    ``h``, ``vh`` (uint64 (K,)) and ``size`` (int64 (K,)) arrive set on the leaves
    (``leaf != not_leaf``).  A non-leaf node is *inner* when a path of at most
    ``max_depth`` edges leads to it from a non-leaf root; its height is one above its
    highest argument's (leaves 0, a non-inner non-leaf argument ``big``).  Each inner
    node of height <= ``max_depth`` gets, from its arguments b0, b1 (b1 < 0: unary)

        h    = node(op, h[b0], bake ? fmix(bits[b1] ^ M3) : h[b1] or 0)
        vh   = node(op, vh[b0], vh[b1] or 0)
        size = min(size[b0] + size[b1] or 0, big)

    Returns ``(inner, height)`` (bool, int64 (K,))."""
    K = op.size
    depth = np.full(K, max_depth + 1, np.int64)
    for r in roots:
        if leaf[r] == not_leaf:
            depth[r] = 0
    for k in range(K - 1, -1, -1):                  # users before arguments
        d = depth[k]
        if d >= max_depth or leaf[k] != not_leaf:
            continue
        for b in (a0[k], a1[k]):
            if b >= 0 and leaf[b] == not_leaf and depth[b] > d + 1:
                depth[b] = d + 1
    inner = depth <= max_depth
    height = np.zeros(K, np.int64)
    for k in range(K):                              # arguments before users
        if leaf[k] != not_leaf:
            continue
        if not inner[k]:
            height[k] = big
            size[k] = big
            continue
        b0, b1 = a0[k], a1[k]
        hk = height[b0]
        if b1 >= 0 and height[b1] > hk:
            hk = height[b1]
        height[k] = min(1 + hk, big)
        if height[k] > max_depth:
            continue
        if b1 >= 0:
            hb = _fmix(bits[b1] ^ M3) if bake[k] else h[b1]
            vb = vh[b1]
            s1 = size[b1]
        else:
            hb = np.uint64(0)
            vb = np.uint64(0)
            s1 = 0
        h[k] = _node(np.uint64(op[k]), h[b0], hb)
        vh[k] = _node(np.uint64(op[k]), vh[b0], vb)
        size[k] = min(size[b0] + s1, big)
    return inner, height


@njit(cache=True, nogil=True)
def chain_heads(user, fused):
    """int64 (K,): ``head[k] = head[user[k]]`` where ``fused[k]`` (a link, used once,
    by ``user[k] > k``), else k."""
    K = user.size
    head = np.arange(K)
    for k in range(K - 1, -1, -1):
        if fused[k]:
            head[k] = head[user[k]]
    return head


@njit(cache=True, nogil=True)
def spine_tour(op, a0, a1, tree, sp, tops, add, sub, neg):
    """The depth-first tour of a spine forest (:func:`.sxtour.dfs_order` says what it
    returns).  ``sp``: the spine nodes (int64, ascending); ``tree[k]``: spine node k
    is a subtree of its one spine parent (else it is a root, or an item of a user);
    ``tops``: the roots whose items are returned, in that order (a repeated top counts
    at its last position).

    Tour of a node k: enter(k), its argument slots in order (an item, or a subtree's
    tour), exit(k); ``dist`` of an event is the number of events after it in its
    tree's tour.  Slot 0 of NEG and slot 1 of SUB flip the parity."""
    K = op.size
    S = sp.size
    pos = np.full(K, -1, np.int64)
    for j in range(S):
        pos[sp[j]] = j
    top_of = np.full(K, -1, np.int64)
    span = np.full((K, 3), -1, np.int64)
    enter_at = np.empty(S, np.int64)
    exit_at = np.empty(S, np.int64)
    par = np.zeros(S, np.bool_)
    visit = np.empty(S, np.int64)
    stack = np.empty(S, np.int64)
    state = np.empty(S, np.int64)
    it_node = np.empty(2 * S, np.int64)
    it_par = np.empty(2 * S, np.bool_)
    it_at = np.empty(2 * S, np.int64)
    it_host = np.empty(2 * S, np.int64)
    first_item = np.full(S, -1, np.int64)
    last_item = np.full(S, -1, np.int64)
    n_visit = 0
    n_items = 0
    for j0 in range(S):
        root = sp[j0]
        if tree[root]:
            continue
        v0, i0 = n_visit, n_items
        t = 0
        par[j0] = False
        enter_at[j0] = t
        t += 1
        visit[n_visit] = j0
        n_visit += 1
        depth = 0
        stack[0] = j0
        state[0] = 0
        while depth >= 0:
            j = stack[depth]
            k = sp[j]
            st = state[depth]
            two = op[k] == add or op[k] == sub
            if st == 0 or (st == 1 and two):
                kid = a0[k] if st == 0 else a1[k]
                flip = op[k] == neg if st == 0 else op[k] == sub
                state[depth] = st + 1
                if tree[kid]:
                    c = pos[kid]
                    par[c] = par[j] ^ flip
                    enter_at[c] = t
                    t += 1
                    visit[n_visit] = c
                    n_visit += 1
                    depth += 1
                    stack[depth] = c
                    state[depth] = 0
                else:
                    it_node[n_items] = kid
                    it_par[n_items] = par[j] ^ flip
                    it_at[n_items] = t
                    it_host[n_items] = k
                    t += 1
                    n_items += 1
            else:
                exit_at[j] = t
                t += 1
                depth -= 1
        last = t - 1
        for v in range(v0, n_visit):
            j = visit[v]
            k = sp[j]
            top_of[k] = root
            span[k, 0] = last - enter_at[j]
            span[k, 1] = last - exit_at[j]
            span[k, 2] = 1 if par[j] else 0
        first_item[j0] = i0
        last_item[j0] = n_items
    # the items of the requested tops, in their order: a reverse pass counts (a
    # repeated top at its last position), a second one fills from the end
    seen = np.zeros(S, np.bool_)
    n_out = 0
    for r in range(tops.size - 1, -1, -1):
        tp = tops[r]
        j0 = pos[tp]
        if j0 >= 0 and not tree[tp] and not seen[j0]:
            seen[j0] = True
            n_out += last_item[j0] - first_item[j0]
    o_top = np.empty(n_out, np.int64)
    o_node = np.empty(n_out, np.int64)
    o_par = np.empty(n_out, np.bool_)
    o_dist = np.empty(n_out, np.int64)
    o_host = np.empty(n_out, np.int64)
    seen[:] = False
    n = n_out
    for r in range(tops.size - 1, -1, -1):
        tp = tops[r]
        j0 = pos[tp]
        if j0 < 0 or tree[tp] or seen[j0]:
            continue
        seen[j0] = True
        n -= last_item[j0] - first_item[j0]
        for i in range(first_item[j0], last_item[j0]):
            q = n + i - first_item[j0]
            o_top[q] = tp
            o_node[q] = it_node[i]
            o_par[q] = it_par[i]
            o_host[q] = it_host[i]
            o_dist[q] = exit_at[j0] - it_at[i]      # the root's exit ends the tour
    return o_top, o_node, o_par, top_of, span, o_dist, o_host


@njit(cache=True, nogil=True)
def single_writes(w, a, b):
    """``(ok, arg0, arg1)``: each instruction's arguments as the instructions that wrote
    the slots ``a[k]``, ``b[k]`` it reads (-1: none), for a program in which every slot
    ``w[k] >= 0`` is written once.  ``ok`` False when a slot is written twice or read
    before it is written (the caller resolves reads by sorting)."""
    K = w.size
    size = 0
    for k in range(K):
        size = max(size, w[k] + 1, a[k] + 1, b[k] + 1)
    writer = np.full(size, -1, np.int64)
    arg0 = np.full(K, -1, np.int64)
    arg1 = np.full(K, -1, np.int64)
    for k in range(K):
        if a[k] >= 0:
            src = writer[a[k]]
            if src < 0:
                return False, arg0, arg1
            arg0[k] = src
        if b[k] >= 0:
            src = writer[b[k]]
            if src < 0:
                return False, arg0, arg1
            arg1[k] = src
        if w[k] >= 0:
            if writer[w[k]] >= 0:
                return False, arg0, arg1
            writer[w[k]] = k
    return True, arg0, arg1


@njit(cache=True, nogil=True)
def first_of_each(key):
    """int64: the index of the first occurrence of each distinct value of ``key``
    (uint64), in order of first occurrence -- ``np.unique(key, return_index=True)[1]``
    as a set, in linear time (an open-addressing table of at least twice the size)."""
    n = key.size
    T = 1
    while T < 2 * n:
        T *= 2
    slot = np.full(T, -1, np.int64)
    mask = np.uint64(T - 1)
    out = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        k = key[i]
        j = np.int64((k ^ (k >> np.uint64(31))) & mask)
        while True:
            s = slot[j]
            if s < 0:
                slot[j] = i
                out[m] = i
                m += 1
                break
            if key[s] == k:
                break
            j = (j + 1) & (T - 1)
    return out[:m]


@njit(cache=True, nogil=True)
def claims_hold(op, leaf, attr, bits, a0, a1, vh, M, F):
    """Whether node ``M[i, c]`` equals node ``M[F[i, c], c]`` in op, leaf kind,
    leaf identity (``attr``), constant bits (``bits``: the value + 0.0 as uint64) and
    the value hashes ``vh`` of both arguments (-1 only against -1), for every (i, c)
    of the (L, N) int64 arrays ``M``, ``F``."""
    L, N = M.shape
    for i in range(L):
        for c in range(N):
            m = M[i, c]
            s = M[F[i, c], c]
            if op[m] != op[s] or leaf[m] != leaf[s] or attr[m] != attr[s] \
                    or bits[m] != bits[s]:
                return False
            x, y = a0[m], a0[s]
            if (x < 0) != (y < 0) or vh[max(x, 0)] != vh[max(y, 0)]:
                return False
            x, y = a1[m], a1[s]
            if (x < 0) != (y < 0) or vh[max(x, 0)] != vh[max(y, 0)]:
                return False
    return True
