"""Scatter-adds over a fixed index set, batched: ``out[:, idx[k]] += v[:, k]``.

An index set with duplicates is split once into *rank passes* (:func:`rank_passes`):
pass r holds each target's r-th occurrence, so within a pass the targets are distinct
and the update is one fancy-indexed ``+=`` over all instances.  The additions into each
target happen in the order of the inputs -- the order of ``numpy.bincount`` that the
single-instance path's host segment sums use -- on every device, so results are
deterministic and equal to the single path's bit for bit on the host.
"""

from __future__ import annotations

import numpy as np


def rank_passes(idx) -> list:
    """Index arrays ``k_0, k_1, ...`` (host int64) partitioning ``range(len(idx))``:
    ``k_r`` lists, in increasing order, the positions holding the r-th occurrence of
    their value, so ``idx[k_r]`` has no duplicates."""
    idx = np.asarray(idx, np.int64)
    if idx.size == 0:
        return []
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    start = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    rank_sorted = np.arange(len(s)) - np.repeat(start, np.diff(np.r_[start, len(s)]))
    rank = np.empty_like(rank_sorted)
    rank[order] = rank_sorted
    return [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1)]


class ScatterSum:
    """Final.  ``out (B, size) = sum over k with idx[k] = j of v[:, k]`` for a fixed
    host index set ``idx`` (K,), in input order (module doc).  Device copies of the
    passes are made once."""

    def __init__(self, xp, idx, size: int):
        self.xp, self.size = xp, int(size)
        idx = np.asarray(idx, np.int64)
        self.passes = [(xp.asarray(k), xp.asarray(idx[k])) for k in rank_passes(idx)]

    def __call__(self, v, out, accumulate: bool = False):
        """``out`` (B, size) = (out +) the sums of ``v`` (B, K); returns ``out``."""
        if not accumulate:
            out.fill(0.0)
        for src, dst in self.passes:
            out[:, dst] += v[:, src]
        return out
