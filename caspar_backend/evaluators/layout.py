"""The global COO layout of a compiled problem, shared by every evaluator.

* Jacobian ``(jac_rows, jac_cols)``: constraint groups in order; group k owns
  ``[con_jac_base[k], con_jac_base[k] + E_k * N_k)`` (entry e of instance i at
  ``base + e*N + i``); no duplicates.
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
class Layout:
    """Index structures of one problem (final)."""

    jac_rows: np.ndarray
    jac_cols: np.ndarray
    grad_idx: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray
    con_jac_base: tuple
    obj_grad_base: tuple
    obj_hess_base: tuple
    con_hess_base: tuple

    @classmethod
    def of(cls, problem) -> "Layout":
        def stack(groups, structure):
            rows, cols, base, pos = [], [], [], 0
            for g in groups:
                r, c = structure(g)
                base.append(pos)
                pos += len(r)
                rows.append(r)
                cols.append(c)
            return rows, cols, base, pos

        jr, jc, jb, _ = stack(problem.constraint_groups, lambda g: g.jac_structure())
        gi, _, gb, _ = stack(problem.objective_groups, lambda g: (g.grad_index(), g.grad_index()))
        ohr, ohc, ohb, pos = stack(problem.objective_groups, lambda g: g.hess_structure())
        chr_, chc, chb, _ = stack(problem.constraint_groups, lambda g: g.hess_structure())
        return cls(_cat(jr), _cat(jc), _cat(gi), _cat(ohr + chr_), _cat(ohc + chc),
                   tuple(jb), tuple(gb), tuple(ohb), tuple(b + pos for b in chb))
