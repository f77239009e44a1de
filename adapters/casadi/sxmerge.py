"""Where caspar's graph would merge partial sums that the program keeps apart.

caspar's graph interns equal subtrees (hash-consing): two equal partial sums are
one node there, referenced twice, which :func:`~.sums.flatten_sums` keeps as an item
where the program's two nodes would each be flattened.  :func:`merge_candidates`
finds every walked spine node that may equal another one (a superset: equal
signatures), so the split can give way where such a merge would change it.
"""

from __future__ import annotations

import numpy as np

from . import optable as T
from .sxdag import LEAF_CONST, SXDag, native
from .sxchains import sum_chains
from .mix64 import fmix as _fmix

_ADD, _SUB, _NEG = (T.CODES[k] for k in ("OP_ADD", "OP_SUB", "OP_NEG"))


def _fmix_ids(ids: np.ndarray) -> np.ndarray:
    """Distinct uint64 codes of node ids (a bijection; never a value hash in practice)."""
    return _fmix(ids.astype(np.uint64) ^ np.uint64(0x5851F42D4C957F2D))


def canonical(dag: SXDag, vh, hashed, nodes=None) -> np.ndarray:
    """uint64: the value hash where defined, else a code of the node itself, of
    ``nodes`` (int64 node ids, -1 read as 0; default: all K nodes)."""
    if nodes is None:
        return np.where(hashed, vh, _fmix_ids(np.arange(dag.op.size)))
    nodes = np.maximum(nodes, 0)
    return np.where(hashed[nodes], vh[nodes], _fmix_ids(nodes))


def merge_candidates(dag: SXDag, hashes, walked, spine, scaled, S_of, c_of,
                      top_id, t_node, t_par, t_dist, top_of, span):
    """bool (K,): walked nodes of caspar's graph (chain heads, unfused additions, NEG,
    scaled spines; not the links :func:`.program._fuse_sums` folds into a ``sum``) that
    may equal another one.  The signature of a spine node is a rolling hash of its
    expansion -- the non-constant items under it, in order, with their parities (items
    by value hash; an unhashed item by its op only) -- which caspar's rewriting (fused
    sums, gathered constants, ``--x``) keeps, so equal nodes have equal signatures; a
    candidate is a signature met twice (a superset of the merges).

    Returns ``(candidates, n_items)``: ``n_items`` int64 (K,) the non-constant items
    under each walked spine node (0 elsewhere) -- a merged spine node with fewer than
    :data:`~.sums.SHARED_MIN_TERMS` is copied into its users by caspar's graph as
    well (:func:`~.sums.flatten_sums`), so only longer ones can change a split.  (A
    term subtracted inside a fused chain becomes ``neg(t)`` in the per-node program,
    :func:`.program._fuse_sums`, one node wherever ``t`` is subtracted so: one item,
    copied likewise.)"""
    h, ok, vh, hashed = hashes
    op, K = dag.op, dag.op.size
    head, _ = sum_chains(dag)
    nat = native("kernels")
    got = None if nat is None else nat.merge_signatures(
        op, dag.leaf, LEAF_CONST, vh, hashed, top_id, t_node, t_par, t_dist, head, walked,
        spine, scaled, top_of, span, S_of, c_of)
    if got is not None:                 # the same signatures in one C++ pass
        return got
    fused = head != np.arange(K)                       # a link folded into its user
    nodes = walked & ((spine & ~fused) | scaled)
    # non-constant items in tour order, per tree: rank r, value x_r = mix(item, parity)
    nc = dag.leaf[t_node] != LEAF_CONST
    tid, tn, tp, td = top_id[nc], t_node[nc], t_par[nc], t_dist[nc]
    item_sig = np.where(hashed[tn], vh[tn], _fmix(op[tn].astype(np.uint64) + np.uint64(7)))
    # a negated item counts -x (mod 2^64), so a node's signature relative to itself is
    # its range's sum, negated where the node's own parity from its top is odd
    x = _fmix(item_sig)
    x = np.where(tp, np.uint64(0) - x, x)
    n = tn.size
    B = np.uint64(0x100000001B3)                       # odd: invertible mod 2^64
    Binv = np.uint64(pow(0x100000001B3, -1, 1 << 64))
    with np.errstate(over="ignore"):
        pw = np.cumprod(np.r_[np.uint64(1), np.full(n, B, np.uint64)])
        ipw = np.cumprod(np.r_[np.uint64(1), np.full(n, Binv, np.uint64)])
        P = np.r_[np.uint64(0), np.cumsum(x * pw[:n], dtype=np.uint64)]
    # item ranks of each spine node's subtree: same tree, tour distance inside its span
    trank = np.full(K, -1, np.int64)                  # items come grouped by tree
    new_tree = np.r_[True, tid[1:] != tid[:-1]] if tid.size else np.zeros(0, bool)
    trank[tid[new_tree]] = np.arange(int(new_tree.sum()))
    BIG = np.int64(1) << 40
    key = trank[tid] * BIG - td                        # sorted (tree, tour order)
    ks = np.flatnonzero(nodes & spine)
    t_of = top_of[ks]
    kr = np.where(t_of >= 0, trank[np.maximum(t_of, 0)], -1)
    lo = np.searchsorted(key, kr * BIG - span[ks, 0])
    hi = np.searchsorted(key, kr * BIG - span[ks, 1])
    lo = np.where(kr >= 0, lo, 0)
    hi = np.where(kr >= 0, hi, 0)
    sig = np.zeros(K, np.uint64)
    with np.errstate(over="ignore"):
        rel = (P[hi] - P[lo]) * ipw[lo]
        rel = np.where(span[ks, 2] > 0, np.uint64(0) - rel, rel)
        sig[ks] = rel + (hi - lo).astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
        kc = np.flatnonzero(nodes & scaled)
        sig[kc] = _fmix(sig[S_of[kc]] ^ (c_of[kc] + 0.0).view(np.uint64)) ^ np.uint64(3)
    idx = np.flatnonzero(nodes)
    _, inv, cnt = np.unique(sig[idx], return_inverse=True, return_counts=True)
    out = np.zeros(K, bool)
    out[idx[cnt[inv.reshape(-1)] > 1]] = True
    n_items = np.zeros(K, np.int64)
    n_items[ks] = hi - lo
    return out, n_items
