"""Minimum-degree fill-reducing ordering of a symmetric sparsity pattern (host, once).

Given the graph ``G`` of a symmetric N x N pattern (vertex i, an edge i -- j for every
off-diagonal entry), symmetric Gaussian elimination of vertex v removes v and joins its
neighbours ``adj(v)`` into a clique; column v of the Cholesky/LDL^T factor then has
exactly the rows ``adj(v)`` (no numerical cancellation assumed).  The *minimum-degree*
rule eliminates, at each step, a vertex of smallest current degree ``|adj(v)|``; ties
go to the smallest original index, so the ordering is a deterministic function of the
pattern.

Supervariables (as in MMD and AMD): vertices with the same closed neighbourhood
``adj(v) + {v}`` are *indistinguishable* -- eliminating one makes the others' degrees
minimal at once, and they fill identically -- so they are merged into one
supervariable of weight ``size``, eliminated together, and a vertex's degree is its
*external* degree ``sum of size(u) over u in adj(v)`` (its own supervariable left out).
On KKT matrices this matters for stability as well as fill: the m_t constraint rows of
an MPC stage have fewer neighbours than each of the stage's variables, but the stage's
controls form one supervariable of smaller external degree, so they go first and the
rows' pivots are Schur complements, not the bare -delta_c.

This is exact-degree minimum degree on the explicit elimination graph: each
elimination costs ``O(sum_{u in adj(v)} |adj(v)|)`` set operations, the order of the
factorization's own operation count, which for the KKT matrices of small and medium
NLPs (N up to a few thousand) is well under a second.  AMD's quotient graph and
approximate degrees exist to keep that cost linear in nnz(A) for much larger N; its
orderings are of the same quality as exact minimum degree's.
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
    return _Elimination(adjacency(n, indptr, indices)).run()


class _Elimination:
    """Final.  Minimum degree with supervariables (module doc) on the explicit graph.

    ``adj[v]``: the supervariables adjacent to representative v; ``size[v]`` and
    ``members[v]``: the vertices v stands for; ``deg[v] = sum of size[u], u in adj[v]``
    (the external degree); ``alive[v]``: v is a representative not yet eliminated."""

    def __init__(self, adj: list):
        n = len(adj)
        self.adj = adj
        self.size = [1] * n
        self.members = [[v] for v in range(n)]
        self.alive = [True] * n
        self._merge(range(n))
        self.deg = [self._degree(v) if self.alive[v] else 0 for v in range(n)]

    def _degree(self, v) -> int:
        size = self.size
        return sum(size[u] for u in self.adj[v])

    def _merge(self, candidates) -> None:
        """Merge indistinguishable representatives among ``candidates`` into the
        smallest index of each class (same closed neighbourhood ``adj + {self}``).
        The neighbours' external degrees are unchanged: the merged sizes move to the
        representative, which they are adjacent to as well."""
        classes = {}
        for u in candidates:
            if self.alive[u]:
                classes.setdefault(frozenset(self.adj[u] | {u}), []).append(u)
        for group in classes.values():
            if len(group) < 2:
                continue
            rep, *rest = sorted(group)
            for w in rest:
                self.size[rep] += self.size[w]
                self.members[rep] += self.members[w]
                self.alive[w] = False
                for x in self.adj[w]:
                    self.adj[x].discard(w)
                self.adj[w] = None

    def run(self) -> np.ndarray:
        adj, alive, deg = self.adj, self.alive, self.deg
        heap = [(deg[v], v) for v in range(len(adj)) if alive[v]]
        heapq.heapify(heap)
        order = []
        while heap:
            d, v = heapq.heappop(heap)
            # lazy deletion: an entry is stale once v is eliminated or merged, or its
            # degree changed (every change pushed a fresh entry)
            if not alive[v] or d != deg[v]:
                continue
            alive[v] = False
            order += sorted(self.members[v])
            nb = adj[v]
            adj[v] = None
            for u in nb:
                au = adj[u]
                au.discard(v)
                au |= nb        # the clique of v's neighbours (adds u itself: removed next)
                au.discard(u)
            self._merge(nb)
            for u in nb:
                if alive[u]:
                    deg[u] = self._degree(u)
                    heapq.heappush(heap, (deg[u], u))
        return np.asarray(order, np.int64)
