"""A Schur split given by the caller: Ceres' ``linear_solver_ordering``.

Ceres' Schur solvers eliminate the parameter blocks of the ordering's group 0 and keep
the others in the reduced system; without an ordering they find an independent set
themselves (caspar: :func:`~caspar_backend.lsq.structure.detect_schur_structure`).  caspar
has no parameter blocks of its own (its variables are scalars), so an ordering names them:

    linear_solver_ordering = [group_0, group_1, ...]

each group a 2-D integer table ``(blocks, size)`` of variable indices, one block per row,
``-1`` padding shorter blocks (e.g. ``point_offset + 3 * arange(P)[:, None] +
arange(3)``: every 3-D point a block).  Group 0 is eliminated; the blocks of the other
groups are the reduced system's (its f-blocks); free variables in no group are tiled into
f-blocks of at most :data:`~caspar_backend.lsq.structure.MAX_F_BLOCK` consecutive
variables.  Held variables (``lbx == ubx``) drop out of their blocks.

Checked (ModelError naming the variable or residual row): indices within ``0..n-1``, no
variable in two blocks, and group 0 an independent set -- no residual row depends on two
of its blocks (``E^T E`` block diagonal).  Array work on ``xp`` (NumPy, or CuPy for a
GPU solve, whose pattern already lives there): no sort.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .structure import MAX_F_BLOCK, SchurStructure


def ordering_tables(ordering, n: int) -> list:
    """The groups of ``ordering`` as int64 NumPy tables ``(blocks, size)``, checked
    against ``n`` variables (range, no variable twice); at least one group."""
    if ordering is None or len(ordering) == 0:
        raise ModelError("linear_solver_ordering: expected a list of groups, group 0 the "
                         "blocks to eliminate")
    tables, seen = [], np.zeros(n, np.int64)
    for k, g in enumerate(ordering):
        t = np.asarray(g)
        if t.ndim == 1:
            t = t.reshape(-1, 1)
        if t.ndim != 2 or (t.size and not np.issubdtype(t.dtype, np.integer)):
            raise ModelError(f"linear_solver_ordering: group {k} must be a 2-D table of "
                             "variable indices (one block per row, -1 pads)")
        t = t.astype(np.int64)
        bad = t[(t < -1) | (t >= n)]
        if bad.size:
            raise ModelError(f"linear_solver_ordering: group {k} names variable "
                             f"{int(bad[0])}, outside 0..{n - 1}")
        np.add.at(seen, t[t >= 0], 1)
        tables.append(t)
    twice = np.flatnonzero(seen > 1)
    if twice.size:
        raise ModelError(f"linear_solver_ordering: variable {int(twice[0])} is in more than "
                         "one block")
    return tables


def _scatter_extreme(xp, out, idx, vals, op):
    if xp is np:
        (np.minimum if op == "min" else np.maximum).at(out, idx, vals)
    else:
        import cupyx

        (cupyx.scatter_min if op == "min" else cupyx.scatter_max)(out, idx, vals)


def structure_from_ordering(pattern, ordering, n_vars: int, xp=np) -> SchurStructure:
    """The :class:`~caspar_backend.lsq.structure.SchurStructure` of ``ordering`` over
    ``pattern`` (a :class:`~caspar_backend.lsq.pattern.ReducedPattern` or its device
    twin: ``free``, ``rows``, ``cols``, ``m``, ``n`` as ``xp`` arrays) of a problem of
    ``n_vars`` variables, its tables as ``xp`` arrays.  See the module docstring."""
    free = xp.asarray(pattern.free)
    tables = ordering_tables(ordering, n_vars)
    newcol = xp.full(n_vars, -1, dtype=xp.int64)
    newcol[free] = xp.arange(free.size, dtype=xp.int64)

    def mapped(t):
        t = xp.asarray(t)
        c = xp.where(t >= 0, newcol[xp.maximum(t, 0)], -1)
        c = c[(c >= 0).any(axis=1)] if c.shape[0] else c
        # free columns first within a block (held ones dropped leave pads at the end)
        return -xp.sort(-c, axis=1) if c.shape[1] > 1 else c

    e_cols = mapped(tables[0])
    reduced = [mapped(t) for t in tables[1:]]
    n = pattern.n
    covered = xp.zeros(n, dtype=bool)
    for t in [e_cols] + reduced:
        covered[t[t >= 0]] = True
    rest = xp.flatnonzero(~covered)
    if rest.size:
        pad = (-rest.size) % MAX_F_BLOCK
        reduced.append(xp.concatenate([rest, xp.full(pad, -1, dtype=xp.int64)])
                       .reshape(-1, MAX_F_BLOCK))
    width = max([t.shape[1] for t in reduced] + [1])
    f_cols = (xp.concatenate([xp.pad(t, ((0, 0), (0, width - t.shape[1])),
                                     constant_values=-1) for t in reduced])
              if reduced else xp.zeros((0, 1), dtype=xp.int64))
    # the e-block of each row; a row depending on two is not an independent set
    block_of_col = xp.full(n, -1, dtype=xp.int64)
    b, k = xp.nonzero(e_cols >= 0)
    block_of_col[e_cols[b, k]] = b
    rows, cols = xp.asarray(pattern.rows), xp.asarray(pattern.cols)
    blk = block_of_col[cols]
    hit = blk >= 0
    m = pattern.m
    big = np.iinfo(np.int64).max
    lo, hi = xp.full(m, big, dtype=xp.int64), xp.full(m, -1, dtype=xp.int64)
    _scatter_extreme(xp, lo, rows[hit], blk[hit], "min")
    _scatter_extreme(xp, hi, rows[hit], blk[hit], "max")
    clash = xp.flatnonzero((hi >= 0) & (lo != hi))
    if clash.size:
        r = int(clash[0])
        a, c = int(lo[r]), int(hi[r])
        va, vc = int(free[e_cols[a, 0]]), int(free[e_cols[c, 0]])
        raise ModelError(f"linear_solver_ordering: residual row {r} depends on two "
                         f"eliminated blocks (variables {va} and {vc}); group 0 must be "
                         "blocks no residual shares")
    row_eb = xp.where(hi >= 0, hi, -1)
    return SchurStructure(e_cols, f_cols, row_eb)
