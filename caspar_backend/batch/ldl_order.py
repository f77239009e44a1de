"""Minimum-degree fill-reducing ordering of a symmetric sparsity pattern (host, once).

Given the graph ``G`` of a symmetric N x N pattern (vertex i, an edge i -- j for every
off-diagonal entry), symmetric Gaussian elimination of vertex v removes v and joins its
neighbours ``adj(v)`` into a clique; column v of the Cholesky/LDL^T factor then has
exactly the rows ``adj(v)`` (no numerical cancellation assumed).  The *minimum-degree*
rule eliminates, at each step, a vertex of smallest current degree ``|adj(v)|``; ties
go to the smallest original index, so the ordering is a deterministic function of the
pattern.

This is the plain (exact-degree) minimum-degree algorithm on the explicit elimination
graph: each elimination costs ``O(sum_{u in adj(v)} |adj(v)|)`` set operations, the
order of the factorization's own operation count, which for the KKT matrices of small
and medium NLPs (N up to a few thousand) is well under a second.  AMD's quotient graph
and approximate degrees exist to keep that cost linear in nnz(A) for much larger N;
its orderings are of the same quality as exact minimum degree's.
"""

from __future__ import annotations

import heapq

import numpy as np


def adjacency(n: int, indptr, indices) -> list[set]:
    """Neighbour sets of the graph of an upper-triangle CSC pattern (``indptr`` int64
    (n+1,), ``indices`` int64 row indices): ``out[i]`` holds every j != i with an entry
    (i, j) or (j, i)."""
    indptr = np.asarray(indptr, np.int64)
    indices = np.asarray(indices, np.int64)
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    off = indices != cols
    rows, cols = indices[off].tolist(), cols[off].tolist()
    adj = [set() for _ in range(n)]
    for i, j in zip(rows, cols):
        adj[i].add(j)
        adj[j].add(i)
    return adj


def minimum_degree(n: int, indptr, indices) -> np.ndarray:
    """The minimum-degree elimination order (module doc) of the upper-triangle CSC
    pattern ``(indptr, indices)`` of an n x n symmetric matrix.

    Returns ``perm``, int64 (n,), a permutation of ``0..n-1``: ``perm[k]`` is the
    original index eliminated k-th, i.e. ``(P K P^T)[k, l] = K[perm[k], perm[l]]``."""
    adj = adjacency(n, indptr, indices)
    heap = [(len(a), v) for v, a in enumerate(adj)]
    heapq.heapify(heap)
    done = np.zeros(n, bool)
    order = []
    while heap:
        deg, v = heapq.heappop(heap)
        # lazy deletion: an entry is stale once v is eliminated or its degree changed
        # (every change pushed a fresh entry)
        if done[v] or deg != len(adj[v]):
            continue
        done[v] = True
        order.append(v)
        nb = adj[v]
        adj[v] = None
        for u in nb:
            au = adj[u]
            au.discard(v)
            au |= nb            # the clique of v's neighbours (adds u itself: removed next)
            au.discard(u)
            heapq.heappush(heap, (len(au), u))
    return np.asarray(order, np.int64)
