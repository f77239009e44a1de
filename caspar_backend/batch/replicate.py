"""The replicated problem: B instances of one problem as one block-diagonal problem.

Take a compiled problem with n variables, m constraints and q parameters.  Its *lifted*
form has the objective as one more constraint row: row 0 is f, row 1 + i is g_i
(``m1 = m + 1`` rows), and its groups are the objective groups (rows all 0) followed by
the constraint groups (rows + 1), all of them constraint groups.  The replicated
problem is B copies of the lifted one side by side:

    x_all[b*n + j]       = x_b[j]        (``X.reshape(-1)`` of X float64 (B, n), C order)
    p_all[b*q + j]       = p_b[j]
    row b*m1             = f_b           (the objective's terms summed like a split row)
    row b*m1 + 1 + i     = g_b,i         (``G.reshape(-1)`` of G (B, m1))

Lifted group k with N instances becomes a group of B*N instances; instance i of copy b
is column ``b*N + i`` of its tables:

    var_table[s, b*N + i]   = var_table1[s, i] + b*n
    param_table[s, b*N + i] = param_table1[s, i] + b*q
    data_table[s, b*N + i]  = data_table1[s, i]
    rows[b*N + i]           = rows1[i] + b*m1

The template (graph, root, gradient and Hessian lists) is the group's own object, so the
generated code (NumPy's cache by source, NVRTC's by text) is the same.  One ``cons``
gives every instance's f and g, one ``jac_values`` every instance's gradient (row b*m1)
and Jacobian, and one ``hess_values`` with ``lam_all = [obj_factor_b, y_b]`` per instance
every instance's Lagrangian Hessian with its own objective factor.

The replicated :class:`~caspar_backend.evaluators.layout.Layout` is tiled from the
lifted one (:func:`tile_layout`, O(B) array work, no sort of B-sized keys); it equals
``Layout.of`` of the replicated problem (tests/batch/test_replicate.py).

``model`` is the single problem's model: the evaluators read it only for
``describe_nonfinite``, whose row numbers are then the replicated ones, so diagnostics
go through a single-instance evaluator instead (``BatchEvaluator.describe_nonfinite``).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..evaluators.layout import Layout
from ..patterns import PatternGroup


def lifted_groups(problem) -> list:
    """``[(group, rows1)]``: the problem's objective groups with ``rows1`` all 0, then
    its constraint groups with ``rows1 = rows + 1`` (int64 (N,) each): the groups of the
    lifted problem in its order."""
    out = [(g, np.zeros(g.size, np.int64)) for g in problem.objective_groups]
    out += [(g, np.asarray(g.rows, np.int64) + 1) for g in problem.constraint_groups]
    return out


def offset_copies(table: np.ndarray, B: int, step: int) -> np.ndarray:
    """int64 (k, B*N) from (k, N): column ``b*N + i`` is ``table[:, i] + b*step``."""
    k, N = table.shape
    shift = step * np.arange(B, dtype=np.int64)
    return (np.asarray(table, np.int64)[:, None, :] + shift[None, :, None]).reshape(k, B * N)


def tile_block(block: np.ndarray, E: int, N: int, B: int, step: int) -> np.ndarray:
    """One group's block of a per-entry array (entry e of instance i at ``e*N + i``,
    length E*N) for the group's B copies (entry e of instance (b, i) at
    ``(e*B + b)*N + i``, length E*B*N), each value plus ``b*step``."""
    shift = step * np.arange(B, dtype=np.int64)
    return (np.asarray(block, np.int64).reshape(E, 1, N) + shift[None, :, None]).reshape(-1)


def replicate_group(group: PatternGroup, rows1: np.ndarray, B: int, n: int, q: int,
                    m1: int) -> PatternGroup:
    """``group`` (with lifted rows ``rows1``) for B instances (module doc), sharing its
    template objects."""
    N = group.size
    data = np.ascontiguousarray(group.data_table, dtype=np.float64)
    return PatternGroup(
        kind="constraints", size=B * N, graph=group.graph, root=group.root,
        var_table=offset_copies(group.var_table, B, n),
        param_table=offset_copies(group.param_table, B, q),
        data_table=np.tile(data, (1, B)),
        rows=offset_copies(rows1[None, :], B, m1)[0],
        grad=group.grad, hess=group.hess)


def tile_layout(lay1: Layout, shapes: list, B: int, n: int, m1: int) -> Layout:
    """The layout of B copies of a lifted problem, from the lifted problem's ``lay1``.

    ``shapes``: ``(rows1, n_grad, n_hess)`` of each lifted group, in order (``rows1``
    its lifted rows, int64 (N,)).  Equal to
    ``Layout.of`` of the replicated problem because each structure is per group and
    the copies do not interact:

    * raw Jacobian, Hessian, term rows: each group's block is tiled (:func:`tile_block`)
      at B times its lifted base;
    * duplicate pairs: copy b's pairs are those of the lifted problem shifted by
      ``(b*m1, b*n)``, and sorting the keys ``row*(B*n) + col`` orders them by copy
      first (rows of copy b lie in ``[b*m1, (b+1)*m1)``), then as in the lifted
      problem; so the unique pairs are the lifted ones copy after copy (copy b's at
      ``b*nnz1`` onwards) and ``jac_map`` is the lifted one plus ``b*nnz1``;
      duplicates exist exactly when the lifted problem has some.
    """
    nnz1 = len(lay1.jac_rows)
    b = np.arange(B, dtype=np.int64)
    raw_r, raw_c, jmap, hr, hc, term_rows = [], [], [], [], [], []
    for (rows1, ej, eh), jb, hb, direct in zip(shapes, lay1.con_jac_base, lay1.con_hess_base,
                                           lay1.con_direct):
        N = len(rows1)
        js, hs = slice(jb, jb + ej * N), slice(hb, hb + eh * N)
        raw_r.append(tile_block(lay1.raw_jac_rows[js], ej, N, B, m1))
        raw_c.append(tile_block(lay1.raw_jac_cols[js], ej, N, B, n))
        if lay1.jac_map is not None:
            jmap.append(tile_block(lay1.jac_map[js], ej, N, B, nnz1))
        hr.append(tile_block(lay1.hess_rows[hs], eh, N, B, n))
        hc.append(tile_block(lay1.hess_cols[hs], eh, N, B, n))
        if not direct:
            term_rows.append(tile_block(rows1, 1, N, B, m1))
    raw_r, raw_c = _cat(raw_r), _cat(raw_c)
    if lay1.jac_map is None:
        jac_r, jac_c, jac_map = raw_r, raw_c, None
    else:
        jac_r = (lay1.jac_rows[None, :] + m1 * b[:, None]).reshape(-1)
        jac_c = (lay1.jac_cols[None, :] + n * b[:, None]).reshape(-1)
        jac_map = _cat(jmap)
    times = (lambda bases: tuple(B * int(v) for v in bases))
    return Layout(jac_r, jac_c, raw_r, raw_c, jac_map, np.zeros(0, np.int64), _cat(hr),
                  _cat(hc), times(lay1.con_jac_base), tuple(lay1.con_direct),
                  times(lay1.con_term_base), _cat(term_rows), (), (),
                  times(lay1.con_hess_base))


def _cat(parts):
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


class ReplicatedProblem:
    """B instances of ``problem`` as one problem (module doc).  Final.

    Has what the evaluators read of a :class:`~caspar_backend.problem.Problem`:
    ``n = B*n1``, ``m = B*(m1)``, ``n_params = B*q``, ``p`` (the single problem's
    current values in every copy), ``objective_groups`` (empty), ``constraint_groups``
    (the replicated lifted groups), ``model`` (the single problem's); plus ``layout``
    (for the evaluators' ``layout=``), ``lifted_layout`` (one copy's), ``batch_size``,
    ``rows_per_instance`` (m1) and ``single`` (the problem)."""

    def __init__(self, problem, batch_size: int):
        B = int(batch_size)
        if B < 1:
            raise ModelError(f"batch size must be at least 1, got {batch_size}")
        self.single, self.batch_size = problem, B
        self.model = problem.model
        n1, q = problem.n, problem.n_params
        self.rows_per_instance = m1 = problem.m + 1
        self.n, self.m, self.n_params = B * n1, B * m1, B * q
        self.p = np.tile(np.asarray(problem.p, dtype=np.float64).reshape(-1), B)
        self.objective_groups: list = []
        lifted = lifted_groups(problem)
        self.constraint_groups = [replicate_group(g, rows1, B, n1, q, m1)
                                  for g, rows1 in lifted]
        if B == 1:
            self.layout = self.lifted_layout = Layout.of(self)
        else:
            self.lifted_layout = ReplicatedProblem(problem, 1).layout
            shapes = [(rows1, len(g.grad), len(g.hess)) for g, rows1 in lifted]
            self.layout = tile_layout(self.lifted_layout, shapes, B, n1, m1)
