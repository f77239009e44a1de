"""Scatter-adds over a fixed index set, batched: ``out[:, idx[k]] += v[:, k]``.

An index set with duplicates is split once into *rank passes* (:func:`rank_passes`):
pass r holds each target's r-th occurrence, so within a pass the targets are distinct
and the update is one fancy-indexed ``+=`` over all instances (on the host; a device
sums each target's inputs in one kernel).  The additions into each target happen in the
order of the inputs -- the order of ``numpy.bincount`` that the
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
    host index set ``idx`` (K,), in input order (module doc).  On the host: rank passes
    (one fancy-indexed ``+=`` each); on a device: one launch of
    ``kernels/segment_sum.cu``'s ``caspar_segment_sum_rows`` (a thread per (row,
    target) adding the target's inputs left to right: the same additions in the same
    order).  ``kernel``: a callable with CuPy's RawKernel convention standing in for it
    (the tests run the source compiled for the host)."""

    THREADS = 256

    def __init__(self, xp, idx, size: int, kernel=None):
        self.xp, self.size = xp, int(size)
        idx = np.asarray(idx, np.int64)
        self.K = int(idx.size)
        self.kernel = kernel
        if kernel is None and xp is not np:
            from ..arrays.raw_kernels import raw_kernel

            self.kernel = raw_kernel(xp, "segment_sum.cu", "caspar_segment_sum_rows")
        if self.kernel is None:
            self.passes = [(xp.asarray(k), xp.asarray(idx[k])) for k in rank_passes(idx)]
            return
        # the inputs of each target in input order (a stable sort), and the targets'
        # first positions; one padding entry (a zero-length device array may be null)
        perm = np.argsort(idx, kind="stable")
        ptr = np.zeros(self.size + 1, np.int64)
        np.cumsum(np.bincount(idx, minlength=self.size), out=ptr[1:])
        self.perm = xp.asarray(np.concatenate([perm, [0]]).astype(np.int64))
        self.ptr = xp.asarray(ptr)

    def __call__(self, v, out, accumulate: bool = False):
        """``out`` (B, size) = (out +) the sums of ``v`` (B, K); returns ``out``."""
        if self.kernel is not None:
            B = int(out.shape[0])
            if v.shape[0] != B or not out.flags.c_contiguous:
                raise ValueError("ScatterSum: v and out need the same rows, out C-order")
            n = B * self.size
            if n:
                v = self.xp.ascontiguousarray(v)
                grid = ((n + self.THREADS - 1) // self.THREADS,)
                self.kernel(grid, (self.THREADS,), (
                    v, self.perm, self.ptr, out, np.int64(self.size), np.int64(self.K),
                    np.int64(B), np.int32(bool(accumulate))))
            return out
        if not accumulate:
            out.fill(0.0)
        for src, dst in self.passes:
            out[:, dst] += v[:, src]
        return out
