"""The additive spines of an :class:`~.sxdag.SXDag`'s roots, split into terms.

Every root (the objective, each constraint nonzero) is a sum of terms,

    root_r  =  sum_t  coef_t * T_t          (T_t a DAG node, coef_t a float)

read off its *additive spine*: the nodes of kind ADD, SUB, NEG, TWICE, MUL by a
constant and DIV by a nonzero constant (the *spine ops*), linked by *spine edges*
(from a spine op into its non-constant arguments) and reached from the root
through spine edges only.  A spine op is *flattened* into the spine above it
when exactly one spine edge leads into it (counting an output as one edge, and
spine edges from every spine op, reachable or not); otherwise -- a partial sum
that two spines share (cumulative sums), or an argument of a non-spine op only
-- it is a term like any other node.  So every spine is a tree and each node
belongs to at most one, which is what lets the split run on arrays:

* ``up[c]``: the unique spine parent of a flattened node ``c`` (``ROOT0 - r``
  for root r), and the factor of that edge (+1, -1 for the subtrahend and NEG,
  2 for TWICE, c for MUL by c, 1/c for DIV by c);
* pointer jumping (``log2(depth)`` rounds, depth 10^6 for a Rosenbrock chain)
  gives each flattened node its root and the product of the factors on its way;
* the terms are the spine edges from a spine member into a node that is not
  flattened, with the member's factor times the edge's; a root whose output
  node is not flattened is its own single term (factor 1).

This equals the per-node reader's :func:`~.sums.flatten_sums` wherever both
split (its scaled-spine rule distributes ``c * S`` only when ``S`` has 8 terms
or more; here always) and the value is the same sum in another order.  Rows are
split into terms however few they have: terms of a varying number of similar
terms are then a few templates, not one per row length (AC-OPF balances).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import optable as T
from .sxdag import LEAF_CONST, SXDag

ROOT0 = -2          # up[c] = ROOT0 - r: c hangs off root r
_NONE = -1

_ADD, _SUB, _NEG, _TWICE, _MUL, _DIV = (T.CODES[k] for k in (
    "OP_ADD", "OP_SUB", "OP_NEG", "OP_TWICE", "OP_MUL", "OP_DIV"))


@dataclass(eq=False)
class Terms:
    """``root_r = sum coef * node`` over the terms (final): ``node``, ``root`` int64
    (T,), ``coef`` float64 (T,), grouped by root in root order."""

    node: np.ndarray
    root: np.ndarray
    coef: np.ndarray


def _spine_edges(dag: SXDag):
    """``(parent, child, factor)`` of every spine edge, from every spine op."""
    op, a0, a1 = dag.op, dag.arg0, dag.arg1
    is_c0 = (a0 >= 0) & (dag.leaf[np.maximum(a0, 0)] == LEAF_CONST)
    is_c1 = (a1 >= 0) & (dag.leaf[np.maximum(a1, 0)] == LEAF_CONST)
    val = dag.value
    par, kid, fac = [], [], []

    def add(mask, child, factor):
        k = np.flatnonzero(mask)
        par.append(k)
        kid.append(child[k])
        fac.append(np.broadcast_to(factor, k.shape)[...] if np.ndim(factor) == 0
                   else factor[k])

    add_or_sub = (op == _ADD) | (op == _SUB)
    add(add_or_sub, a0, 1.0)
    add(op == _ADD, a1, 1.0)
    add(op == _SUB, a1, -1.0)
    add(op == _NEG, a0, -1.0)
    add(op == _TWICE, a0, 2.0)
    mul0 = (op == _MUL) & is_c0 & ~is_c1
    add(mul0, a1, val[np.maximum(a0, 0)])
    mul1 = (op == _MUL) & is_c1 & ~is_c0
    add(mul1, a0, val[np.maximum(a1, 0)])
    div = (op == _DIV) & is_c1 & ~is_c0
    cval = val[np.maximum(a1, 0)]
    div &= (cval != 0.0) & np.isfinite(cval)
    with np.errstate(divide="ignore"):
        add(div, a0, np.where(div, 1.0 / np.where(cval == 0.0, 1.0, cval), 1.0))
    is_spine = add_or_sub | (op == _NEG) | (op == _TWICE) | mul0 | mul1 | div
    return (np.concatenate(par), np.concatenate(kid),
            np.concatenate([np.asarray(f, np.float64) for f in fac]), is_spine)


def split_terms(dag: SXDag, roots: np.ndarray) -> Terms:
    """The terms of each root node ``roots[r]`` (module docstring)."""
    K = dag.op.size
    R = roots.size
    par, kid, fac, is_spine = _spine_edges(dag)
    # spine edges into each node: from spine ops, plus one per output that is it
    sref = np.bincount(kid, minlength=K) + np.bincount(roots, minlength=K)
    flat = is_spine & (sref == 1)
    up = np.full(K, _NONE, np.int64)
    f_up = np.ones(K)
    e_in = flat[kid]
    up[kid[e_in]] = par[e_in]
    f_up[kid[e_in]] = fac[e_in]
    r_in = flat[roots]
    up[roots[r_in]] = ROOT0 - np.flatnonzero(r_in)
    # pointer jumping: top[c] = the root (ROOT0 - r) above c or the first
    # non-flattened spine op (whose spine is inside a term: not split)
    members = np.flatnonzero(flat)
    top = up[members]
    acc = f_up[members].copy()
    pos = np.full(K, -1, np.int64)
    pos[members] = np.arange(members.size)
    # jump[i]: the member index of member i's top while that top is flattened too
    jump = np.where(top >= 0, pos[np.maximum(top, 0)], -1)
    live = np.flatnonzero(jump >= 0)
    while live.size:
        j = jump[live]
        acc[live] *= acc[j]
        top[live] = top[j]
        jump[live] = jump[j]
        live = live[jump[live] >= 0]
    root_of = np.full(K, _NONE, np.int64)
    on_root = top <= ROOT0
    root_of[members[on_root]] = ROOT0 - top[on_root]
    fac_of = np.ones(K)
    fac_of[members[on_root]] = acc[on_root]
    # terms: spine edges from a root's spine member into a node not flattened
    src_root = root_of[par]
    t = (src_root >= 0) & ~flat[kid]
    node = [kid[t], roots[~r_in]]
    root = [src_root[t], np.flatnonzero(~r_in)]
    coef = [fac_of[par[t]] * fac[t], np.ones(int((~r_in).sum()))]
    node, root, coef = (np.concatenate(v) for v in (node, root, coef))
    order = np.argsort(root, kind="stable")
    return Terms(node[order], root[order].astype(np.int64), coef[order])
