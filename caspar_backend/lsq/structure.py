"""Schur structure of a Jacobian pattern: which variable blocks can be eliminated.

Found from the compiled Jacobian's COO pattern alone (no hint from the user), in three
vectorized steps:

1. **Blocks** (supervariables): columns with exactly the same set of residual rows form
   one block -- a point's three coordinates, a camera pose's six parameters.  Columns
   are grouped by (row count, two random-weight hashes of the row set) and the grouping
   is verified entry by entry (a column whose rows differ from its group's first column
   becomes a block of its own).
2. **Block graph**: blocks a and b are adjacent when some row touches both.
3. **Eliminated blocks** (Ceres' e-blocks): an independent set of the block graph,
   i.e. no residual row touches two of them, so that ``E^T E`` is block diagonal.  A
   block of at most :data:`MAX_ELIMINATED_SIZE` columns is taken when its key
   (degree, size, index) is smaller than every neighbour's -- points (few cameras
   each) before cameras (many points each) -- and rounds repeat on what is left
   (Luby's independent set) until nothing changes; each round is array work.

The remaining columns are the reduced (camera) system's, tiled into f-blocks of at most
:data:`MAX_F_BLOCK` columns.  :class:`SchurStructure` holds the index maps the
elimination (:mod:`caspar_backend.lsq.schur`) uses every iteration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays.segments import distinct
from .jacobian import csr_order, segment_pairs
from .pair_sort import columns_missing_rows, label_adjacency, row_labels

#: largest block eliminated (a dense s x s inverse per block)
MAX_ELIMINATED_SIZE = 9
#: reduced-system columns are tiled into blocks of at most this many columns
MAX_F_BLOCK = 9
#: rounds of the independent-set selection
MAX_ROUNDS = 8


@dataclass(frozen=True)
class SchurStructure:
    """Index maps of one Schur split of a Jacobian pattern (final).

    Columns: ``e_cols`` int64 (n_e_blocks, s_e) the columns of each eliminated block
    (-1: padding); ``f_cols`` int64 (n_f_blocks, s_f) likewise for the reduced system.
    Rows: ``row_eb`` int64 (m,) the e-block each row touches (-1: none).  NumPy arrays,
    or CuPy arrays for a GPU solve built on the device
    (:func:`~caspar_backend.lsq.ordering.structure_from_ordering`).
    ``density``: :func:`reduced_block_density`, where the automatic choice of a CPU
    solve needs it (else None)."""

    e_cols: np.ndarray
    f_cols: np.ndarray
    row_eb: np.ndarray
    density: float | None = None

    @property
    def n_e_blocks(self) -> int:
        return self.e_cols.shape[0]

    @property
    def n_e(self) -> int:
        return int((self.e_cols >= 0).sum())

    @property
    def n_f(self) -> int:
        return int((self.f_cols >= 0).sum())


def column_blocks(rows, cols, n, csr=None) -> np.ndarray:
    """Block (supervariable) id of each of the n columns: equal ids <=> equal row sets.
    Ids are 0..B-1 in order of first column.  ``csr``: ``(indptr, indices)`` of the
    same entries by row, when the caller has them."""
    m = int(rows.max()) + 1 if rows.size else 1
    if csr is None:
        _, indptr, indices = csr_order(rows, cols, m, n)
    else:
        indptr, indices = csr
    count = np.bincount(cols, minlength=n)
    # two hashes of each column's row set: sums of random integer weights below 2^30,
    # exact in float64 for up to 2^23 rows per column whatever the order of the entries
    rng = np.random.default_rng(0x5C4E)
    w1, w2 = (rng.integers(1, 1 << 30, m).astype(np.float64) for _ in range(2))
    h1 = np.bincount(cols, weights=w1[rows], minlength=n)
    h2 = np.bincount(cols, weights=w2[rows], minlength=n)
    # group columns by (count, h1, h2): a lexsort over the n columns, runs of equal keys
    srt = np.lexsort((h2, h1, count))
    new = np.r_[True, (np.diff(count[srt]) != 0) | (np.diff(h1[srt]) != 0)
                | (np.diff(h2[srt]) != 0)]
    run = np.cumsum(new) - 1
    first_of_run = np.minimum.reduceat(srt, np.flatnonzero(new)) if n else srt
    rep = np.empty(n, dtype=np.int64)
    rep[srt] = first_of_run[run]                       # representative column
    # verified: with equal counts and no duplicate entries, every row of c having an
    # entry in rep[c] means equal row sets
    bad = np.flatnonzero(columns_missing_rows(indptr, indices, rows, cols, rep, n))
    block = rep.copy()
    block[bad] = bad                                   # mismatch: a block of its own
    _, ids = np.unique(block, return_inverse=True)
    return ids.reshape(-1).astype(np.int64)


def detect_schur_structure(pattern, min_blocks: int = 1, csr=None) -> SchurStructure | None:
    """The Schur split of ``pattern`` (a :class:`~caspar_backend.lsq.problem.
    ReducedPattern`), or None when fewer than ``min_blocks`` blocks can be eliminated.
    ``csr``: ``(indptr, indices)`` of the pattern by row, when the caller has them (a
    :class:`~caspar_backend.lsq.jacobian.SparseJacobian`'s)."""
    n, m = pattern.n, pattern.m
    rows, cols = pattern.rows, pattern.cols
    if n == 0 or rows.size == 0:
        return None
    if csr is None:
        _, indptr, indices = csr_order(rows, cols, m, n)
        csr = (indptr, indices)
    blk = column_blocks(rows, cols, n, csr)
    nb = int(blk.max()) + 1
    size = np.bincount(blk, minlength=nb)
    used = np.bincount(blk[cols], minlength=nb) > 0
    # row-block incidences, then adjacent block pairs (rows touching several blocks)
    indptr, inc_blk, _ = row_labels(csr[0], csr[1], blk)
    inc_row = np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr))
    adj_ptr, ev = label_adjacency(indptr, inc_blk, nb)
    deg = np.diff(adj_ptr)
    eu = np.repeat(np.arange(nb, dtype=np.int64), deg)
    # a total order on blocks: (degree, size, index)
    key = np.lexsort((np.arange(nb), size, deg))
    rank = np.empty(nb, dtype=np.int64)
    rank[key] = np.arange(nb)
    chosen = np.zeros(nb, dtype=bool)
    alive = used & (size <= MAX_ELIMINATED_SIZE)
    # edges grouped by their first block (CSR): segment minima over each block's edge
    # run by one reduceat per round
    big = np.iinfo(np.int64).max
    has_edges = np.flatnonzero(deg > 0)
    starts = adj_ptr[has_edges]
    for _ in range(MAX_ROUNDS):
        # a block whose rank is below every alive neighbour's
        nbr_min = np.full(nb, big)
        if eu.size:
            nbr_min[has_edges] = np.minimum.reduceat(np.where(alive[ev], rank[ev], big), starts)
        pick = alive & (rank < nbr_min)
        if not pick.any():
            break
        chosen |= pick
        # neighbours of chosen blocks can no longer be chosen
        blocked = np.zeros(nb, dtype=bool)
        blocked[ev[pick[eu]]] = True
        alive &= ~(pick | blocked)
        if not alive.any():
            break
    if np.count_nonzero(chosen) < min_blocks:
        return None
    e_ids = np.flatnonzero(chosen)
    e_cols = _tiles(blk, e_ids, size, None)
    f_ids = np.flatnonzero(~chosen)
    f_cols = _tiles(blk, f_ids, size, MAX_F_BLOCK)
    # e-block of each row (independent set: at most one per row)
    e_of_block = np.full(nb, -1, dtype=np.int64)
    e_of_block[e_ids] = np.arange(len(e_ids))
    row_eb = np.full(m, -1, dtype=np.int64)
    hit = e_of_block[inc_blk] >= 0
    row_eb[inc_row[hit]] = e_of_block[inc_blk[hit]]
    return SchurStructure(e_cols, f_cols, row_eb)


def _tiles(blk, ids, size, cap) -> np.ndarray:
    """Columns of blocks ``ids`` as a padded table (-1 pads); blocks longer than
    ``cap`` are cut into consecutive tiles of ``cap`` columns."""
    if len(ids) == 0:
        return np.zeros((0, 1), dtype=np.int64)
    sel = np.isin(blk, ids)
    cols = np.flatnonzero(sel)
    b = blk[cols]
    order = np.argsort(b, kind="stable")
    cols, b = cols[order], b[order]
    start = np.r_[0, np.flatnonzero(b[1:] != b[:-1]) + 1]
    pos = np.arange(len(cols)) - np.repeat(start, np.diff(np.r_[start, len(cols)]))
    width = int(size[ids].max())
    if cap is not None and width > cap:
        tile_of = np.repeat(np.arange(len(start)), np.diff(np.r_[start, len(cols)]))
        # tile index: (block, pos // cap) renumbered
        key = tile_of * (width // cap + 1) + pos // cap
        _, tile = np.unique(key, return_inverse=True)
        pos = pos % cap
        width = cap
    else:
        _, tile = np.unique(b, return_inverse=True)
    out = np.full((int(tile.max()) + 1, width), -1, dtype=np.int64)
    out[tile.reshape(-1), pos] = cols
    return out


def reduced_block_density(pattern, st: SchurStructure, max_pairs: float = 5e7) -> float:
    """The fraction of the reduced system's block pairs (i <= j, of the f-blocks) that
    ``S = F^T F + D^2 - W V^{-1} W^T`` couples: blocks i and j are coupled when one
    e-block (a point) or one row touching no e-block reaches both.  1.0 without
    counting when the groups' pairs would exceed ``max_pairs`` (S is then dense)."""
    n_fb, n_eb = st.f_cols.shape[0], st.e_cols.shape[0]
    if n_fb == 0:
        return 1.0
    fb_of_col = np.full(pattern.n, -1, dtype=np.int64)
    b, _ = np.nonzero(st.f_cols >= 0)
    fb_of_col[st.f_cols[st.f_cols >= 0]] = b
    rows = np.asarray(pattern.rows, dtype=np.int64)
    fb = fb_of_col[np.asarray(pattern.cols, dtype=np.int64)]
    keep = fb >= 0
    eb = st.row_eb[rows[keep]]
    group = np.where(eb >= 0, eb, n_eb + rows[keep])      # a point, or the row itself
    inc = distinct(group * n_fb + fb[keep])                # distinct (group, f-block)
    g, f = inc // n_fb, inc % n_fb
    size = np.bincount(np.searchsorted(distinct(g), g)).astype(np.float64)
    if float((size * (size + 1) / 2).sum()) > max_pairs:
        return 1.0
    a, c = segment_pairs(g, np.arange(g.size))             # (g sorted: the identity)
    lo, hi = np.minimum(f[a], f[c]), np.maximum(f[a], f[c])
    return distinct(lo * n_fb + hi).size / (n_fb * (n_fb + 1) / 2)
