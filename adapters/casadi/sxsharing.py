"""The sharing rule of split sums, checked on the bulk reader's instances.

:func:`caspar_backend.patterns.split_terms` splits a sum into its terms only when they
share little: for a root r with n_r terms,

    ops(distinct terms of r)  <=  sharing_limit(body_r, n_r),
    body_r = 1 + sum of the terms' op counts - (their non-leaf positions - distinct_r),

with ``distinct_r`` the sum's distinct non-leaf nodes.  :func:`sharing_allows` checks it
for every split root with a lower bound of ``distinct_r`` first (only the terms' top
nodes counted as distinct or not; a smaller body is a stricter rule) and computes the
exact count only for the roots that bound does not clear.  The per-root counts are one
C++ loop where :mod:`.sxkernels_native` can be had (``sharing_counts``), else NumPy
passes; the same integers either way.
"""

from __future__ import annotations

import numpy as np

from caspar_backend.patterns import sharing_limit

from .mix64 import fmix as _fmix
from .sxdag import native, walks

#: the multiplier of an instance's wrap in its hashes (buckets and term keys)
WRAP_MUL = np.uint64(0xD6E8FEB86659FD93)
#: mixed with a root's index into per-root keys
_ROOT = np.uint64(0x632BE59BD9B4E019)


def _counts(ins, ops_of, first_nl, vh, R, first_of_each):
    """``(total, n_terms, pos_total, term_total, distinct)`` per root (module doc):
    the split instances' op counts, number, non-leaf positions, the op counts of their
    distinct terms, and the distinct value hashes of their top nodes."""
    sp = ins.split
    _, hashed = ins.hashes[2:]
    nat = native("kernels")
    if nat is not None:
        return nat.sharing_counts(ins.root, ins.node, ins.wrap, ins.c, sp, ops_of,
                                  first_nl, hashed, vh, R, WRAP_MUL)
    total = np.bincount(ins.root[sp], weights=ops_of[sp], minlength=R)
    n_terms = np.bincount(ins.root[sp], minlength=R)
    pos_total = np.bincount(ins.root[sp], weights=first_nl[sp], minlength=R)
    # the terms' side counts a term written twice once (one node in caspar's graph):
    # instances of equal value hash, wrap and factor; an unhashed term is never merged
    # here, so this count is never below caspar's (where it is above, the caller reads
    # the program per node)
    sp_i = np.flatnonzero(sp)
    nd = np.maximum(ins.node[sp_i], 0)
    th = np.where(hashed[nd], vh[nd], _fmix(nd.astype(np.uint64) ^ np.uint64(0x5851F42D)))
    th = th ^ (ins.wrap[sp_i].astype(np.uint64) * WRAP_MUL) ^ (ins.c[sp_i] + 0.0).view(np.uint64)
    th = th ^ _fmix(ins.root[sp_i].astype(np.uint64) + _ROOT)
    once = first_of_each(th)
    term_total = np.bincount(ins.root[sp_i[once]], weights=ops_of[sp_i[once]], minlength=R)
    top = sp & (ins.node >= 0)
    distinct = _distinct_of(ins.root[top], vh[np.maximum(ins.node[top], 0)], R,
                            first_of_each)
    return total, n_terms, pos_total, term_total, distinct


def _distinct_of(r, h, R, first_of_each):
    """Distinct (root, value hash) pairs per root, one 64-bit key each (a collision
    only undercounts the sum's nodes: a stricter rule, never a wrong split)."""
    key = h ^ _fmix(r.astype(np.uint64) + _ROOT)
    first = first_of_each(key)
    return np.bincount(r[first], minlength=R)


def sharing_allows(ins, ops_of, first_nl, classes, vh, compiled: bool) -> bool:
    """Every split root of the :class:`~.sxterms.Instances` ``ins`` passes the sharing
    rule (module doc); ``ops_of``, ``first_nl`` int64 per instance: its per-node op
    count and distinct non-leaf positions (its wrap counted); ``classes`` the
    grouping's ``(class, positions)`` pairs, read for the exact count."""
    first_of_each = walks(compiled).first_of_each
    R = int(ins.root.max()) + 1 if ins.root.size else 0
    if not ins.split.any():
        return True
    total, n_terms, pos_total, term_total, distinct = _counts(ins, ops_of, first_nl, vh,
                                                              R, first_of_each)
    roots = np.flatnonzero(n_terms)

    def failing(distinct, among):
        """The split roots of ``among`` whose terms share too much with this count of
        the sum's distinct nodes."""
        body = 1 + total - (pos_total - distinct)
        return among[term_total[among] > sharing_limit(body[among], n_terms[among])]

    doubtful = failing(distinct, roots)
    if not doubtful.size:
        return True
    # the exact count, for the roots the bound does not clear (each root's count is
    # its own: the keys hold the root)
    doubt = np.zeros(R, bool)
    doubt[doubtful] = True
    rs, hs = [], []
    for cl, Mc in classes:
        mine = doubt[ins.root[cl.inst]]
        if not mine.any():
            continue
        inst, Mc = cl.inst[mine], Mc[:, mine]
        if cl.first_nl:
            V = vh[Mc[cl.first_nl]]
            rs.append(np.broadcast_to(ins.root[inst], V.shape).reshape(-1))
            hs.append(V.reshape(-1))
        w = ins.wrap[inst]
        if (w != 0).any():
            # the wrap's nodes: hashed by their op, factor and the term's hash
            wh = vh[np.maximum(ins.node[inst], 0)] ^ (w.astype(np.uint64) * WRAP_MUL) \
                ^ (ins.c[inst] + 0.0).view(np.uint64)
            rs.append(ins.root[inst][w != 0])
            hs.append(wh[w != 0])
    if not rs:
        return not failing(np.zeros(R, np.int64), doubtful).size
    return not failing(_distinct_of(np.concatenate(rs), np.concatenate(hs), R,
                                    first_of_each), doubtful).size
