"""The global COO layout of a compiled problem, shared by every evaluator.

Constraint *instances* are whole constraint bodies, or -- for wide sums, see
:func:`caspar_backend.patterns.constraint_instances` -- the terms of one body;
several instances may then belong to one row.

* Constraint values: a group is *direct* when each of its rows has exactly one
  instance; it writes ``g[rows]``.  Other groups write one value per instance
  into a term buffer (``con_term_base[k]`` onwards) that is summed into the
  rows ``term_rows`` by a fixed-order segment sum.
* Jacobian: groups write the *raw* COO ``(raw_jac_rows, raw_jac_cols)`` in group
  order, group k from ``con_jac_base[k]`` (entry e of instance i at
  ``base + e*N + i``).  Split rows can repeat a (row, col) pair; then
  ``jac_map`` (raw position -> unique position) sums them into the public COO
  ``(jac_rows, jac_cols)``, which never has duplicates.  ``jac_map`` is ``None``
  when the raw COO is already duplicate-free (the common case: written in place).
* Objective gradient terms: objective groups in order from ``obj_grad_base[k]``,
  same layout; ``grad_idx`` gives each term's variable (summed into grad f).
* Lagrangian Hessian ``(hess_rows, hess_cols)``, lower triangle: objective
  groups (``obj_hess_base``) then constraint groups (``con_hess_base``);
  duplicates are summed by the consumer.

All index arrays are int64, 0-based, on the host.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def _cat(parts):
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


@dataclass(frozen=True)
class SegmentPlan:
    """Fixed-order segment sum ``out[dst[j]] = sum_{k in seg j} v[perm[k]]`` (final).

    Built once from ``idx`` (segment of each input); segments are the distinct
    values of ``idx`` in increasing order (``dst`` lists them), or all of
    ``0..size-1`` when ``size`` is given (empty segments sum to 0).
    """

    perm: np.ndarray  # int64 (K,) inputs sorted by segment (stable)
    ptr: np.ndarray   # int64 (S+1,) segment starts in perm
    dst: np.ndarray   # int64 (S,) output index of each segment

    @classmethod
    def of(cls, idx: np.ndarray, size: int | None = None) -> "SegmentPlan":
        idx = np.asarray(idx, dtype=np.int64)
        if size is None:
            return _grouped(idx)[2]
        perm = np.argsort(idx, kind="stable")
        counts = np.bincount(idx, minlength=size)
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(perm.astype(np.int64), ptr, np.arange(size, dtype=np.int64))


def _grouped(key: np.ndarray):
    """``(uniq, inverse, plan)`` of the int64 keys ``key`` in one stable sort:
    ``np.unique(key, return_inverse=True)`` and ``SegmentPlan.of(key)``, whose segments
    are the runs of equal keys (``SegmentPlan.of(inverse, len(uniq))`` is the same plan:
    the inverse orders as the keys do, ties in place)."""
    perm = np.argsort(key, kind="stable")
    sk = key[perm]
    first = np.ones(len(sk), dtype=bool)
    np.not_equal(sk[1:], sk[:-1], out=first[1:])
    uniq = sk[first]
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[perm] = np.cumsum(first) - 1
    ptr = np.append(np.flatnonzero(first), len(key)).astype(np.int64)
    return uniq, inverse, SegmentPlan(perm.astype(np.int64), ptr, uniq.astype(np.int64))


@dataclass(frozen=True)
class Layout:
    """Index structures of one problem (final)."""

    jac_rows: np.ndarray
    jac_cols: np.ndarray
    raw_jac_rows: np.ndarray
    raw_jac_cols: np.ndarray
    jac_map: np.ndarray | None
    grad_idx: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray
    con_jac_base: tuple
    con_direct: tuple
    con_term_base: tuple
    term_rows: np.ndarray
    obj_grad_base: tuple
    obj_hess_base: tuple
    con_hess_base: tuple
    #: the segment sum of ``jac_map`` (raw entries into the public ones), made with the
    #: unique entries (None: make it from ``jac_map``)
    jac_plan: SegmentPlan | None = None

    @classmethod
    def of(cls, problem, host_jacobian: bool = True) -> "Layout":
        """The layout of ``problem``.  ``host_jacobian=False``: where every constraint
        group owns its rows, the Jacobian's index arrays (``jac_rows``, ``jac_cols``,
        ``raw_jac_rows``, ``raw_jac_cols``) are left None -- they are each group's
        ``jac_structure()`` stacked, which the GPU evaluator builds on the device from
        the tables it uploads anyway (:class:`~caspar_backend.evaluators.cuda_eval.
        CudaEvaluator`); the other fields are the same."""
        def stack(groups, structure):
            rows, cols, base, pos = [], [], [], 0
            for g in groups:
                r, c = structure(g)
                base.append(pos)
                pos += len(r)
                rows.append(r)
                cols.append(c)
            return rows, cols, base, pos

        cgroups = problem.constraint_groups
        # direct groups own their rows; the rest accumulate through a term buffer
        count = np.bincount(_cat([g.rows for g in cgroups]), minlength=problem.m)
        direct = [bool(np.all(count[g.rows] == 1)) for g in cgroups]
        sizes = [len(g.grad) * g.size for g in cgroups]
        jb = list(np.r_[0, np.cumsum(sizes, dtype=np.int64)][:-1].tolist())
        # an instance's variable slots are distinct (a group's invariant: a variable is one
        # slot), so entries repeat only where two groups share a row: with every group
        # direct the raw entries are the Jacobian's, no sort needed
        raw_r = raw_c = jac_r = jac_c = jac_map = jac_plan = None
        if host_jacobian or not all(direct):
            jr, jc, _, _ = stack(cgroups, lambda g: g.jac_structure())
            raw_r, raw_c = jac_r, jac_c = _cat(jr), _cat(jc)
        if raw_r is not None and not all(direct):
            n1 = max(problem.n, 1)
            uniq, inv, plan = _grouped(raw_r * n1 + raw_c)
            if len(uniq) < len(raw_r):
                jac_r, jac_c, jac_map = uniq // n1, uniq % n1, inv
                # the plan's dst are the keys; the segment sum's are the public entries
                jac_plan = SegmentPlan(plan.perm, plan.ptr, np.arange(len(uniq)))
        term_base, term_rows, pos = [], [], 0
        for g, d in zip(cgroups, direct):
            term_base.append(pos)
            if not d:
                term_rows.append(g.rows)
                pos += g.size
        gi, _, gb, _ = stack(problem.objective_groups, lambda g: (g.grad_index(), g.grad_index()))
        ohr, ohc, ohb, hpos = stack(problem.objective_groups, lambda g: g.hess_structure())
        chr_, chc, chb, _ = stack(cgroups, lambda g: g.hess_structure())
        if jac_r is not None:
            jac_r = jac_r.astype(np.int64, copy=False)
            jac_c = jac_c.astype(np.int64, copy=False)
        return cls(jac_r, jac_c, raw_r, raw_c, jac_map, _cat(gi), _cat(ohr + chr_), _cat(ohc + chc),
                   tuple(jb), tuple(direct), tuple(term_base), _cat(term_rows),
                   tuple(gb), tuple(ohb), tuple(b + hpos for b in chb), jac_plan)
