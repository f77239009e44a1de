"""The instances of an :class:`~.sxdag.SXDag`'s roots, as the per-node reader makes them.

The per-node reader builds every root into caspar's graph, rebuilds long additive
spines as n-ary sums (:func:`~.sums.flatten_sums`) and lets
:class:`~caspar_backend.problem.Problem` split wide sums into their terms
(:func:`~caspar_backend.patterns.split_terms`, :func:`~caspar_backend.patterns.
constraint_instances`).  This module computes the same *instances* on arrays, so the
bulk reader's pattern groups -- and with them every evaluation and derivative -- are
those of the per-node reader, bit for bit:

* the *spine* of a root: ADD, SUB, NEG nodes reached from it through their arguments
  (every argument of ADD/SUB, the one of NEG); its *terms* are the non-spine
  arguments met, in depth-first order, first argument first, each with the parity
  of the NEG/SUB-subtrahend edges on its way (:func:`_dfs_order`: an Euler tour of
  the spine forest ranked by pointer jumping);
* a term ``c * S``, ``S * c``, ``2 * S`` (OP_TWICE) or ``S / c`` with ``S`` a spine of
  at least :data:`~.sums.SCALE_MIN_TERMS` terms is distributed: its terms become
  ``c * t`` (``t / c``), negated where the two parities differ;
* a root whose spine (after distribution) has fewer than ``max(min_terms, 3)``
  terms is one instance, the root itself (min_terms 3 for the objective, 8 for a
  constraint); otherwise its terms are gathered as ``caspar.Graph.sum`` does:
  constant terms are summed left to right into one constant placed last (dropped
  when 0), and the rest keep their order;
* a constraint so gathered with at least :data:`~caspar_backend.patterns.
  SPLIT_MIN_TERMS` terms, and the objective with at least 2, is split into them
  when they share little (:data:`~caspar_backend.patterns.SPLIT_MAX_SHARING`; the
  operation counts come from the instances' trees, :mod:`.sxgroup`).

:class:`Instances` (arrays of length I, roots in order and each root's instances in
order): ``root`` int64, ``node`` int64 (the term's DAG node; -1 for a constant
instance), ``wrap`` int8 (:data:`PLAIN`, :data:`NEG`, :data:`MUL`, :data:`NEG_MUL`,
:data:`DIV`, :data:`NEG_DIV`, :data:`CONST`), ``c`` float64 (the factor of MUL/DIV
wraps, the value of a CONST instance), ``split`` bool (the instance is a term of a
rebuilt sum: subject to the sharing rule).

Where the per-node reader would do something these arrays do not describe -- a spine
node or scaled spine reached by two spine edges (a shared partial sum), a rebuilt
sum whose instance would be the sum node itself (fewer than SPLIT_MIN_TERMS terms
once constants are gathered, no terms at all, a non-finite constant sum) --
:func:`split_instances` returns None and the caller reads the program per node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from caspar_backend.patterns import SPLIT_MIN_TERMS

from . import optable as T
from .sums import SCALE_MIN_TERMS
from .sxdag import LEAF_CONST, SXDag

PLAIN, NEG, MUL, NEG_MUL, DIV, NEG_DIV, CONST = range(7)
#: the per-node reader's minimum spine length for a rebuilt root (objective, constraint)
OBJ_MIN_TERMS, CON_MIN_TERMS = 3, 8
#: constant terms of one root summed one position at a time, at most this many
MAX_CONST_TERMS = 64

_ADD, _SUB, _NEG, _TWICE, _MUL, _DIV = (T.CODES[k] for k in (
    "OP_ADD", "OP_SUB", "OP_NEG", "OP_TWICE", "OP_MUL", "OP_DIV"))


@dataclass(eq=False)
class Instances:
    """The roots' instances in the per-node reader's order (final; module doc)."""

    root: np.ndarray
    node: np.ndarray
    wrap: np.ndarray
    c: np.ndarray
    split: np.ndarray


def _scaled(dag: SXDag, spine: np.ndarray):
    """``(is_scaled, S, c, divide)``: nodes ``c * S``, ``S * c``, ``2 * S``, ``S / c``
    with ``S`` a spine node and ``c`` a constant (arrays over the K nodes)."""
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    K = op.size
    c0 = (a0 >= 0) & (dag.leaf[np.maximum(a0, 0)] == LEAF_CONST)
    c1 = (a1 >= 0) & (dag.leaf[np.maximum(a1, 0)] == LEAF_CONST)
    s0 = (a0 >= 0) & spine[np.maximum(a0, 0)]
    s1 = (a1 >= 0) & spine[np.maximum(a1, 0)]
    v0, v1 = dag.value[np.maximum(a0, 0)], dag.value[np.maximum(a1, 0)]
    mul_a = (op == _MUL) & c0 & s1          # casadi's first argument constant
    mul_b = (op == _MUL) & c1 & s0 & ~mul_a
    twice = (op == _TWICE) & s0
    div = (op == _DIV) & c1 & s0
    S = np.full(K, -1, np.int64)
    c = np.zeros(K)
    S[mul_a], c[mul_a] = a1[mul_a], v0[mul_a]
    S[mul_b], c[mul_b] = a0[mul_b], v1[mul_b]
    S[twice], c[twice] = a0[twice], 2.0
    S[div], c[div] = a0[div], v1[div]
    return mul_a | mul_b | twice | div, S, c, div


def scaled_nodes(dag: SXDag) -> np.ndarray:
    """bool (K,): the scaled spines ``c * S``, ``S * c``, ``2 * S``, ``S / c``."""
    spine = ((dag.op == _ADD) | (dag.op == _SUB) | (dag.op == _NEG)) & (dag.leaf < 0)
    return _scaled(dag, spine)[0]


def _dfs_order(dag: SXDag, spine: np.ndarray, tops: np.ndarray):
    """The terms under spine tops ``tops`` in depth-first order.

    Returns ``(top, node, parity)`` int64/int64/bool arrays, grouped by top in the
    order of ``tops``, each group in depth-first order (first argument first).  An
    Euler tour of the spine forest (each spine node has one spine parent: the caller
    checked) ranked by pointer jumping: no step per tree level."""
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
    is_t0 = ~spine[kid0]
    is_t1 = two & ~spine[np.maximum(kid1, 0)]
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
    # list ranking: dist to the terminal event, and the terminal itself
    term = nxt < 0
    dist = np.where(term, 0, 1).astype(np.int64)
    end = np.where(term, np.arange(E), nxt)
    live = np.flatnonzero(~term)
    while live.size:
        j = end[live]
        dist[live] += dist[j]
        end[live] = end[j]
        live = live[~term[end[live]]]
    # terminals are exit(top) events: each term item's tree is its top
    item_node = np.concatenate([kid0[t0], kid1[t1]])
    item_par = np.concatenate([sgn0[t0], sgn1[t1]])
    item_ev = np.concatenate([item0[t0], item1[t1]])
    # parity: NEG / subtrahend edges on the way from the top.  Along the tour the
    # parity of an event is the running xor of the flips of enter/exit events, so
    # the parity of the path to a term is the xor of edges above it: computed by
    # jumping up the parent chain instead (each spine node's own edge flag)
    par_of = np.zeros(K, np.int64)                  # the parent spine node of a spine child
    flip = np.zeros(K, bool)
    par_of[:] = -1
    par_of[kid0[ch0]] = sp[ch0]
    flip[kid0[ch0]] = sgn0[ch0]
    par_of[kid1[ch1]] = sp[ch1]
    flip[kid1[ch1]] = sgn1[ch1]
    up = par_of[sp]
    acc = flip[sp].copy()
    jmp = np.where(up >= 0, pos[np.maximum(up, 0)], -1)
    live = np.flatnonzero(jmp >= 0)
    while live.size:
        j = jmp[live]
        acc[live] ^= acc[j]
        jmp[live] = jmp[j]
        live = live[jmp[live] >= 0]
    item_host = np.concatenate([t0, t1])            # spine index holding the item
    parity = item_par ^ acc[item_host]
    top_ev = end[item_ev]                           # exit(top) = 2*pos[top] + 1
    top_node = sp[(top_ev - 1) // 2]
    rank_in_tops = np.full(K, -1, np.int64)
    rank_in_tops[tops] = np.arange(tops.size)
    tr = rank_in_tops[top_node]
    keep = tr >= 0
    order = np.lexsort((-dist[item_ev][keep], tr[keep]))
    return (top_node[keep][order], item_node[keep][order], parity[keep][order])


def split_instances(dag: SXDag, nf: int) -> Instances | None:
    """The per-node reader's instances of the roots ``dag.out`` (``nf`` objective
    roots first, then the constraints), or None (module docstring)."""
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    K = op.size
    roots = dag.out
    R = roots.size
    spine = (op == _ADD) | (op == _SUB) | (op == _NEG)
    spine &= dag.leaf < 0
    scaled, S_of, c_of, div_of = _scaled(dag, spine)
    # spine edges into every node, from every spine node and scaled node, plus roots
    sp = np.flatnonzero(spine)
    two = (op[sp] == _ADD) | (op[sp] == _SUB)
    refs = np.bincount(a0[sp], minlength=K) + np.bincount(a1[sp][two], minlength=K)
    refs += np.bincount(S_of[scaled], minlength=K) + np.bincount(roots, minlength=K)
    if np.any(refs[spine | scaled] > 1):
        return None             # a shared partial sum: the per-node reader decides
    # spine tops: spine roots, and the S of every scaled node
    sc = np.flatnonzero(scaled)
    root_sp = roots[spine[roots]]
    tops = np.concatenate([root_sp, S_of[sc]])
    top_id, t_node, t_par = _dfs_order(dag, spine, tops)
    n_of_top = np.bincount(np.searchsorted(np.sort(tops), top_id), minlength=tops.size)
    count = np.zeros(K, np.int64)
    count[np.sort(tops)] = n_of_top
    # a scaled term is distributed when its S has enough terms
    dist_ok = np.zeros(K, bool)
    dist_ok[sc] = count[S_of[sc]] >= SCALE_MIN_TERMS
    # first level: each root's items (its spine's terms, or the root itself)
    r_of_top = np.full(K, -1, np.int64)
    r_of_top[root_sp] = np.flatnonzero(spine[roots])
    lvl_root = np.concatenate([r_of_top[top_id][r_of_top[top_id] >= 0],
                               np.flatnonzero(~spine[roots])])
    is_top_item = r_of_top[top_id] >= 0
    lvl_node = np.concatenate([t_node[is_top_item], roots[~spine[roots]]])
    lvl_par = np.concatenate([t_par[is_top_item], np.zeros(int((~spine[roots]).sum()), bool)])
    lvl_seq = np.concatenate([np.arange(int(is_top_item.sum())),
                              np.zeros(int((~spine[roots]).sum()), np.int64)])
    o = np.lexsort((lvl_seq, lvl_root))
    lvl_root, lvl_node, lvl_par = lvl_root[o], lvl_node[o], lvl_par[o]
    # second level: distributed scaled items expand into S's terms
    dist_item = dist_ok[lvl_node]
    inner_of = top_id                                 # S -> its terms, grouped
    s_sorted = np.argsort(inner_of, kind="stable")
    starts = np.searchsorted(inner_of[s_sorted], S_of[lvl_node[dist_item]])
    n_in = count[S_of[lvl_node[dist_item]]]
    rep = np.ones(lvl_node.size, np.int64)
    rep[dist_item] = n_in
    item_of = np.repeat(np.arange(lvl_node.size), rep)
    sub = np.arange(item_of.size) - np.repeat(np.cumsum(rep) - rep, rep)
    node = lvl_node[item_of].copy()
    par = lvl_par[item_of].copy()
    wrap = np.zeros(item_of.size, np.int8)
    cc = np.zeros(item_of.size)
    d_rows = np.flatnonzero(dist_item[item_of])
    if d_rows.size:
        it = item_of[d_rows]
        which = np.searchsorted(np.flatnonzero(dist_item), it)
        src = s_sorted[starts[which] + sub[d_rows]]
        scn = lvl_node[it]
        node[d_rows] = t_node[src]
        par[d_rows] = lvl_par[it] ^ t_par[src]
        divide = div_of[scn]
        wrap[d_rows] = np.where(divide, DIV, MUL)
        cc[d_rows] = c_of[scn]
    root = lvl_root[item_of]
    n_out = np.bincount(root, minlength=R)
    min_terms = np.full(R, CON_MIN_TERMS)
    min_terms[:nf] = OBJ_MIN_TERMS
    rebuilt = n_out >= np.maximum(min_terms, 3)
    # a root kept whole is one PLAIN instance: the root node itself
    whole = np.flatnonzero(~rebuilt)
    keep = rebuilt[root]
    root, node, par, wrap, cc = root[keep], node[keep], par[keep], wrap[keep], cc[keep]
    wrap = np.where(par, wrap + 1, wrap).astype(np.int8)   # PLAIN->NEG, MUL->NEG_MUL, ...
    # constant items fold (c * t, t / c, negated) and gather, in order, at the end
    is_c = dag.leaf[node] == LEAF_CONST
    v = dag.value[node]
    v = np.where((wrap == MUL) | (wrap == NEG_MUL), cc * v, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where((wrap == DIV) | (wrap == NEG_DIV), v / np.where(cc == 0, 1.0, cc), v)
    v = np.where((wrap == NEG) | (wrap == NEG_MUL) | (wrap == NEG_DIV), -v, v)
    ci = np.flatnonzero(is_c)
    csum = np.zeros(R)
    if ci.size:
        cr = root[ci]
        k_in = np.arange(ci.size) - np.searchsorted(cr, cr)   # k-th constant of its root
        if int(k_in.max()) >= MAX_CONST_TERMS:
            return None
        if int(k_in.max()) >= 1:
            return None           # per-node chains add constants up first: not reproduced
        for k in range(int(k_in.max()) + 1):                  # left to right, as Graph.sum
            s = k_in == k
            csum[cr[s]] = csum[cr[s]] + v[ci[s]]
    if not np.all(np.isfinite(csum)):
        return None
    nonc = ~is_c
    width = np.bincount(root[nonc], minlength=R) + (csum != 0.0)
    reb = np.flatnonzero(rebuilt)
    if np.any(width[reb] == 0):
        return None
    min_split = np.full(R, SPLIT_MIN_TERMS)
    min_split[:nf] = 2
    if np.any((width[reb] < min_split[reb]) & (width[reb] > 1)):
        return None               # the instance would be the sum node itself
    # assemble: whole roots, then rebuilt roots' terms and their constant, in root order
    cr_ = np.flatnonzero(rebuilt & (csum != 0.0))
    parts_root = [whole, root[nonc], cr_]
    parts_node = [roots[whole], node[nonc], np.full(cr_.size, -1, np.int64)]
    parts_wrap = [np.zeros(whole.size, np.int8), wrap[nonc], np.full(cr_.size, CONST, np.int8)]
    parts_c = [np.zeros(whole.size), cc[nonc], csum[cr_]]
    parts_seq = [np.zeros(whole.size, np.int64), np.arange(int(nonc.sum())),
                 np.full(cr_.size, K + root.size, np.int64)]
    r_all = np.concatenate(parts_root)
    o = np.lexsort((np.concatenate(parts_seq), r_all))
    node_all = np.concatenate(parts_node)[o]
    wrap_all = np.concatenate(parts_wrap)[o]
    # a whole root that is a constant leaf is a CONST instance of its value
    wl = (wrap_all == PLAIN) & (node_all >= 0)
    wl &= dag.leaf[np.maximum(node_all, 0)] == LEAF_CONST
    c_all = np.concatenate(parts_c)[o]
    c_all[wl] = dag.value[node_all[wl]]
    wrap_all[wl] = CONST
    node_all[wl] = -1
    r_all = r_all[o]
    split = (width[r_all] > 1) & rebuilt[r_all]
    return Instances(r_all.astype(np.int64), node_all.astype(np.int64), wrap_all,
                     c_all.astype(np.float64), split)
