"""The model summary: sizes, templates, sparsity, memory and the device 'auto' picks.

``model_summary(problem)`` -> :class:`ModelSummary`; ``str()`` of it is the table users
print.  Counts are exact; ``kkt_nnz`` is the lower triangle of the augmented system

    [ W + Sigma + delta_w I     J^T        ]      nnz = nnz(tril W) + (diagonal entries
    [ J                        -delta_c I  ]            W lacks) + nnz(J) + m

before fill-in, and ``memory_bytes`` the model's own arrays (group tables, data, bounds,
start) plus one iteration's value vectors and KKT values -- the factorization's fill is
the linear solver's and not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays.segments import distinct

#: float64 vectors of length n + m an interior-point iteration keeps (iterate, steps,
#: trial point, residuals, scaling, bounds): an estimate for the memory figure
_VECTORS_PER_ROW = 24


@dataclass(frozen=True)
class ModelSummary:
    """Final.  See the module docstring."""

    n: int
    m: int
    n_params: int
    objective_templates: int
    objective_instances: int
    constraint_templates: int
    constraint_instances: int
    jac_nnz: int
    hess_nnz: int
    kkt_nnz: int
    memory_bytes: int
    device: str
    device_reason: str

    def __str__(self) -> str:
        rows = [
            ("variables", f"{self.n:,}"),
            ("constraints", f"{self.m:,}"),
            ("parameters", f"{self.n_params:,}"),
            ("objective", f"{self.objective_templates:,} templates, "
                          f"{self.objective_instances:,} instances"),
            ("constraint rows", f"{self.constraint_templates:,} templates, "
                                f"{self.constraint_instances:,} instances"),
            ("Jacobian nnz", f"{self.jac_nnz:,}"),
            ("Hessian nnz (lower)", f"{self.hess_nnz:,}"),
            ("KKT nnz (lower)", f"{self.kkt_nnz:,} before fill-in"),
            ("memory (estimate)", _bytes(self.memory_bytes)),
            ("device 'auto'", f"{self.device}: {self.device_reason}"),
        ]
        w = max(len(k) for k, _ in rows)
        return "\n".join(["caspar model summary"] + [f"  {k:<{w}}  {v}" for k, v in rows])


def _bytes(b: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if b < 1000 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1000.0
    return f"{b} B"


def _auto_device(size: int) -> tuple[str, str]:
    from ..device import AUTO_MIN_SIZE, gpu_problem

    if size < AUTO_MIN_SIZE:
        return "cpu", (f"n + m = {size:,} is below {AUTO_MIN_SIZE:,}, where a GPU iteration's "
                       "fixed launch and synchronization cost exceeds the work")
    why = gpu_problem(solver=True)
    if why is not None:
        return "cpu", f"the GPU path is not usable: {why}"
    return "cuda", f"n + m = {size:,} is at least {AUTO_MIN_SIZE:,} and a usable GPU is present"


def model_summary(problem) -> ModelSummary:
    from ..evaluators.layout import Layout

    lay = Layout.of(problem)
    n, m = problem.n, problem.m
    # the layouts are COO with repeated (row, col) pairs (summed): count distinct ones
    jac_nnz = distinct(lay.jac_rows.astype(np.int64) * max(n, 1) + lay.jac_cols).size
    hess = distinct(lay.hess_rows.astype(np.int64) * max(n, 1) + lay.hess_cols)
    hess_nnz = hess.size
    on_diag = np.count_nonzero(hess // max(n, 1) == hess % max(n, 1))
    kkt_nnz = hess_nnz + (n - on_diag) + jac_nnz + m
    tables = sum(g.var_table.nbytes + g.param_table.nbytes + g.data_table.nbytes
                 + g.rows.nbytes for g in problem.groups)
    values = 8 * (_VECTORS_PER_ROW * (n + m) + 2 * kkt_nnz + len(problem.p))
    device, reason = _auto_device(n + m)
    obj, con = problem.objective_groups, problem.constraint_groups
    return ModelSummary(
        n=n, m=m, n_params=problem.n_params, objective_templates=len(obj),
        objective_instances=sum(g.size for g in obj), constraint_templates=len(con),
        constraint_instances=sum(g.size for g in con), jac_nnz=jac_nnz, hess_nnz=hess_nnz,
        kkt_nnz=kkt_nnz, memory_bytes=int(tables + values), device=device,
        device_reason=reason)
