"""Where each instance's outputs lie in the replicated problem's outputs.

The replicated problem (:mod:`.replicate`) writes its values in its own layout; a
batched solver wants instance b's values in the *single* problem's layout (its
Jacobian and Hessian COO orders), so that structures built once for the single
problem (the KKT assembly map) serve every instance.  The maps below are positions
into the replicated outputs, computed once; each evaluation is one ``take`` per output
into a preallocated (B, k) array.

Positions in the replicated outputs (B copies, lifted group k with N instances, base
``base1`` of its block in the lifted layout, entry e of instance i at ``base1 + e*N + i``
there):

* a per-group block (raw Jacobian, Hessian) of copy b: ``B*base1 + (e*B + b)*N + i``
  (:func:`block_positions`);
* the public (duplicate-free) Jacobian: the raw position above when the lifted problem
  has no duplicate pairs (then public = raw), else ``b*nnz1 + u`` for the lifted public
  position u (:func:`~.replicate.tile_layout`).

Single-problem entries in the lifted problem: the single Jacobian's entry (r, c) is the
lifted pair (r + 1, c), found by key; the objective gradient's entry c the lifted pair
(0, c) when f depends on x_c, else the constant 0 -- the last slot of the Jacobian
buffer (``zero``), which the evaluator never writes.  The single Hessian COO *is* the
lifted one (objective groups first, then constraint groups, the same templates), which
:meth:`GatherMaps.of` checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..evaluators.layout import Layout
from .replicate import ReplicatedProblem, lifted_groups


def block_positions(base1: int, E: int, N: int, B: int) -> np.ndarray:
    """int64 (B, E*N): column ``e*N + i`` of row b is ``B*base1 + (e*B + b)*N + i``, the
    replicated position of entry e of instance i of copy b of a lifted group's block."""
    e = np.arange(E, dtype=np.int64)[:, None, None]
    b = np.arange(B, dtype=np.int64)[None, :, None]
    i = np.arange(N, dtype=np.int64)[None, None, :]
    pos = B * base1 + (e * B + b) * N + i  # (E, B, N)
    return pos.transpose(1, 0, 2).reshape(B, E * N)


def _locate(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Position in ``keys`` (distinct int64) of each of ``wanted`` (all present)."""
    order = np.argsort(keys, kind="stable")
    at = order[np.searchsorted(keys, wanted, sorter=order)] if len(keys) else order
    if len(wanted) and not np.array_equal(keys[at], wanted):
        raise AssertionError("batch gather: a single-problem Jacobian pair is missing "
                             "from the lifted problem")
    return at


@dataclass(frozen=True)
class GatherMaps:
    """Final.  Host int64 positions (module doc for the formulas):

    * ``grad`` (B, n): into the replicated Jacobian buffer of length ``zero + 1``,
      where ``zero = nnz`` of the replicated Jacobian holds 0; entry (b, j) is
      df_b/dx_j;
    * ``jac`` (B, nnz_j): into the replicated Jacobian; (b, k) is instance b's value at
      the single Jacobian's COO entry k;
    * ``hess`` (B, nnz_h): into the replicated Hessian values; (b, k) is instance b's
      value at the single Hessian's COO entry k (duplicates kept, as written).
    """

    grad: np.ndarray
    jac: np.ndarray
    hess: np.ndarray
    zero: int

    @classmethod
    def of(cls, rep: ReplicatedProblem, single: Layout) -> "GatherMaps":
        """The maps of ``rep`` for the single problem whose layout is ``single``."""
        B, lay1 = rep.batch_size, rep.lifted_layout
        problem = rep.single
        n = max(problem.n, 1)
        lifted = lifted_groups(problem)
        nnz1 = len(lay1.jac_rows)
        if lay1.jac_map is None:  # public = raw: per-group blocks
            pub = _cat_cols([block_positions(jb, len(g.grad), g.size, B)
                             for (g, _), jb in zip(lifted, lay1.con_jac_base)], B)
        else:
            pub = (nnz1 * np.arange(B, dtype=np.int64))[:, None] + np.arange(nnz1)[None, :]
        keys1 = lay1.jac_rows * n + lay1.jac_cols
        jac = pub[:, _locate(keys1, (single.jac_rows + 1) * n + single.jac_cols)]
        zero = B * nnz1
        obj = np.flatnonzero(lay1.jac_rows == 0)
        grad = np.full((B, problem.n), zero, dtype=np.int64)
        grad[:, lay1.jac_cols[obj]] = pub[:, obj]
        if not (np.array_equal(lay1.hess_rows, single.hess_rows)
                and np.array_equal(lay1.hess_cols, single.hess_cols)):
            raise AssertionError("batch gather: the lifted Hessian COO differs from the "
                                 "single problem's")
        hess = _cat_cols([block_positions(hb, len(g.hess), g.size, B)
                          for (g, _), hb in zip(lifted, lay1.con_hess_base)], B)
        return cls(grad, np.ascontiguousarray(jac), hess, zero)


def _cat_cols(parts: list, B: int) -> np.ndarray:
    return np.concatenate(parts, axis=1) if parts else np.zeros((B, 0), np.int64)
