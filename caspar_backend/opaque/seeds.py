"""Seeds: the composition's derivatives of a call in the directions its arguments move.

Notation of :mod:`caspar_backend.opaque`.  The chain rule needs a call's ``D_i``
(``dF/da``, k active inputs) only through the products ``D_i A_i`` and, for the
Hessian, ``A_i^T H_i A_i``, where ``A_i`` (k x (n + ny)) is the argument rows' Jacobian
in ``z = (x, y)``.  Its nonzero columns ``C_i`` are the quantities the arguments read;
when every instance reads fewer of them than it has active inputs -- single shooting
with a parameter vector repeated into each instance's arguments (``repmat(p, 1, M)``:
``4 M`` inputs, 4 parameters) -- the products come directly from ``K = max |C_i|``
directional derivatives, ``D_i V_i`` and ``V_i^T H_i V_i`` with ``V_i = A_i[:, C_i]``
(forward mode, forward over reverse), instead of ``k`` (the full Jacobian and Hessian
of the call).  The cost of a call's derivatives then follows the quantities it depends
on, as casadi's own derivatives of the whole NLP do, not the width of its arguments.

:class:`SeedPlan` holds, per function group, the fixed index maps between the values
(``A``'s CSR data, the host function's dense results) and the composed matrices:
``E = D A`` ((ny x (n + ny)) entries of this group's rows) and its block of ``M``
(``(n + ny)^2``, lower triangle).  :func:`plan` returns None where seeds would not
save directions (``K >= k``); such a group keeps the full Jacobian and Hessian.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import structure as S


@dataclass(frozen=True, eq=False)
class SeedPlan:
    """Fixed index maps of one group's seeded derivatives (final)."""

    K: int                        # seeds per instance
    N: int                        # instances
    k: int                        # active inputs
    act_rows: np.ndarray          # (k, N) argument rows of the active inputs
    v_dst: np.ndarray             # flat positions in V (N, k, K) ...
    v_src: np.ndarray             # ... of these positions in A's CSR data
    e_map: S.CSRMap               # E's entries (ny x nz) ...
    e_src: np.ndarray             # ... from these flat positions in D V (N, n_out, K)
    h_map: S.CSRMap               # the Hessian block's lower triangle (nz x nz) ...
    h_src: np.ndarray             # ... from these flat positions in V^T H V (N, K, K)

    def seeds(self, a_data) -> np.ndarray:
        """``V`` (N, k, K) from the values of ``A`` (its CSR data)."""
        V = np.zeros(self.N * self.k * self.K)
        V[self.v_dst] = np.asarray(a_data, dtype=float)[self.v_src]
        return V.reshape(self.N, self.k, self.K)

    def first(self, dv):
        """``E`` (CSR, ny x nz) from ``D V`` (N, n_out, K)."""
        return self.e_map.matrix(np.asarray(dv, dtype=float).ravel()[self.e_src])

    def second(self, vhv):
        """The symmetric block of ``M`` (CSR, nz x nz) from ``V^T H V`` (N, K, K)."""
        return self.h_map.matrix(np.asarray(vhv, dtype=float).ravel()[self.h_src])

    def weights(self, vjp, na: int) -> np.ndarray:
        """``D^T mu`` on the argument rows (na,) from the calls' ``D_i^T mu_i`` (N, k)."""
        return np.bincount(self.act_rows.T.ravel(), weights=np.asarray(vjp).ravel(),
                           minlength=na)


def plan(grp, a_map: S.CSRMap, d_struct, nz: int) -> SeedPlan | None:
    """The seed plan of the group ``grp`` (a :class:`~.calls.CallGroup`), or None when
    seeds would not save directions.  ``a_map``: the fixed CSR structure of ``A`` (na x
    nz); ``d_struct``: this group's ``D`` (ny x na, 0/1 CSR)."""
    k, N = len(grp.active), grp.size
    if k == 0 or N == 0:
        return None
    act_rows = grp.arg_rows[grp.active]                     # (k, N)
    inst = np.repeat(np.arange(N, dtype=np.int64), k)       # instance of each (i, a)
    rows = act_rows.T.ravel()                               # row of each (i, a)
    A01 = S.pattern_matrix(a_map)
    sel = S.ones(inst, rows, (N, a_map.shape[0]))
    C = S.boolean(sel @ A01)                                # columns read per instance
    C.sort_indices()
    counts = np.diff(C.indptr)
    K = int(counts.max()) if counts.size else 0
    if K >= k or K == 0:
        return None
    c_ptr = C.indptr.astype(np.int64)
    c_keys = np.repeat(np.arange(N, dtype=np.int64), counts) * nz + C.indices

    def slot(i, col):
        """Position of column ``col`` in instance ``i``'s sorted column set."""
        return np.searchsorted(c_keys, i * nz + col) - c_ptr[i]

    # V: entry (i, a, j) = A[row(i, a), C_i[j]], from A's CSR data position p
    ptr = a_map.indptr.astype(np.int64)
    n_ent = ptr[rows + 1] - ptr[rows]
    owner = np.repeat(np.arange(N * k, dtype=np.int64), n_ent)
    p = np.repeat(ptr[rows], n_ent) + (np.arange(owner.size, dtype=np.int64)
                                       - np.repeat(np.cumsum(n_ent) - n_ent, n_ent))
    v_dst = owner * K + slot(owner // k, a_map.indices[p].astype(np.int64))
    # E = D A: entries (y, col) of this group's structural product
    E = S.boolean(d_struct @ A01).tocoo()
    n_out = grp.out_aux.shape[0]
    ny = d_struct.shape[0]
    inst_of = np.full(ny, -1, dtype=np.int64)
    r_of = np.full(ny, -1, dtype=np.int64)
    inst_of[grp.out_aux] = np.arange(N, dtype=np.int64)[None, :]
    r_of[grp.out_aux] = np.arange(n_out, dtype=np.int64)[:, None]
    ey, ec = E.row.astype(np.int64), E.col.astype(np.int64)
    ei = inst_of[ey]
    e_src = (ei * n_out + r_of[ey]) * K + slot(ei, ec)
    # the Hessian block: (C_i[j], C_i[l]) for l <= j < |C_i| (lower: C_i is sorted)
    jj, ll = np.tril_indices(K)
    hi = np.repeat(np.arange(N, dtype=np.int64), len(jj))
    hj, hl = np.tile(jj, N), np.tile(ll, N)
    keep = hj < counts[hi]
    hi, hj, hl = hi[keep], hj[keep], hl[keep]
    cols = C.indices.astype(np.int64)
    h_map = S.CSRMap(cols[c_ptr[hi] + hj], cols[c_ptr[hi] + hl], (nz, nz), symmetric=True)
    h_src = (hi * K + hj) * K + hl
    return SeedPlan(K, N, k, act_rows, v_dst, p, S.CSRMap(ey, ec, (ny, nz)), e_src,
                    h_map, h_src)
