"""Structural hashes of the terms of an :class:`~.sxdag.SXDag`, level by level.

The *shape* of a term is its expression tree with the leaves' identities
forgotten: ops and argument order kept, a leaf only a kind (variable,
parameter, constant).  Two exceptions keep a constant's value in the shape, as
the per-node reader's graph does: the exponent of ``pow`` (caspar turns
``x^2`` into ``powi(x, 2)`` and ``x^0.5`` into ``sqrt(x)``).  The hash of a node

    h(leaf)     = H[kind]                         (H[const value] for an exponent)
    h(op(a, b)) = mix(op, h(a), h(b))             (uint64, argument order kept)

is computed for all nodes inside terms by one walk in instruction order
(:func:`.sxwalks.hash_trees`; NumPy passes, one per height, for smaller programs), with each node's *height* (leaves 0, a node one above
its highest argument) over the nodes reachable from the terms within
:data:`MAX_DEPTH` levels, and the *tree size* (leaves counted with multiplicity) of
every term.  A term deeper than MAX_DEPTH or larger than
:data:`MAX_LEAVES` is *not hashed* (``ok`` False): a shared prefix (single
shooting, cumulative sums) makes trees exponentially larger than their DAG, and
such terms go to the per-node reader.

Equal hashes are a proposal, not a proof: the grouping re-reads each group's
trees position by position and splits off any instance that differs
(:mod:`.sxgroup`).
"""

from __future__ import annotations

import numpy as np

from . import optable as T
from .mix64 import M3, fmix
from .sxdag import LEAF_CONST, LEAF_PAR, LEAF_VAR, NOT_LEAF, SXDag, native, walks

#: terms whose tree is deeper than this are read by the per-node reader
MAX_DEPTH = 48
#: terms whose tree has more leaves (with multiplicity) than this likewise
MAX_LEAVES = 256

_POW = np.array([T.CODES["OP_POW"], T.CODES["OP_CONSTPOW"]], np.int64)
_LEAF_H = {LEAF_VAR: 0x51ED270B27A1C3E5, LEAF_PAR: 0x3C6EF372FE94F82B,
           LEAF_CONST: 0x2545F4914F6CDD1D}
_BIG = np.int64(1) << 40
#: the leaf kinds and their shape hashes, as :func:`.sxwalks_native.leaf_hashes` takes them
_KINDS = np.array(list(_LEAF_H), np.int64)
_HS = np.array(list(_LEAF_H.values()), np.uint64)


def baked(dag: SXDag) -> np.ndarray:
    """bool (K,): nodes whose second argument is a constant kept in the shape (the
    ``pow`` nodes looked at only).  Computed once per DAG."""
    got = getattr(dag, "_baked", None)
    if got is None:
        op, a1 = dag.op, dag.arg1
        k = np.flatnonzero((op == _POW[0]) | (op == _POW[1]))
        b = a1[k]
        got = np.zeros(op.size, bool)
        got[k] = (b >= 0) & (dag.leaf[np.maximum(b, 0)] == LEAF_CONST)
        dag._baked = got
    return got


def term_hashes(dag: SXDag, nodes: np.ndarray):
    """``(h, ok, vh, hashed)`` over all K nodes, for the trees under ``nodes``: uint64
    shape hashes ``h``, bool ``hashed`` (where the hashes are defined: leaves and the
    nodes under ``nodes`` within MAX_DEPTH levels), bool ``ok`` (hashed, and at most
    MAX_LEAVES leaves), and the *value hashes* ``vh`` (the same mixing with leaves by
    identity: variable and parameter index, constant value, -0.0 as 0.0)."""
    K = dag.op.size
    a0, a1, leaf = dag.arg0, dag.arg1, dag.leaf
    nat = native()
    if nat is not None:                 # leaves, walk and flags in one C++ call
        got = nat.term_hashes(dag.op, a0, a1, leaf, NOT_LEAF, dag.value, dag.attr, _KINDS,
                              _HS, baked(dag), np.asarray(nodes, np.int64), MAX_DEPTH,
                              MAX_LEAVES)
        if got is not None:
            return got
    if nat is not None:                 # the leaves' hashes in one C++ pass
        h, vh, size = nat.leaf_hashes(leaf, dag.value, dag.attr, _KINDS, _HS)
    else:
        h = np.zeros(K, np.uint64)
        for kind, v in _LEAF_H.items():
            h[leaf == kind] = np.uint64(v)
        vh = np.zeros(K, np.uint64)
        lv = np.flatnonzero(leaf != NOT_LEAF)
        ident = np.where(leaf[lv] == LEAF_CONST, (dag.value[lv] + 0.0).view(np.uint64),
                         np.maximum(dag.attr[lv], 0).astype(np.uint64))
        vh[lv] = fmix(h[lv] ^ fmix(ident ^ M3))
        size = (leaf != NOT_LEAF).astype(np.int64)
    inner, height = walks(dag.compiled).hash_trees(
        dag.op, a0, a1, leaf, NOT_LEAF, h, vh, size, baked(dag), dag.value.view(np.uint64),
        np.asarray(nodes, np.int64), MAX_DEPTH, _BIG)
    if nat is not None:
        hashed, ok = nat.hash_flags(leaf, NOT_LEAF, inner, height, size, MAX_DEPTH,
                                    MAX_LEAVES)
    else:
        hashed = (leaf != NOT_LEAF) | (inner & (height <= MAX_DEPTH))
        ok = hashed & (size <= MAX_LEAVES)
    return h, ok, vh, hashed
