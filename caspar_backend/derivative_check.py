"""A finite-difference derivative checker, like IPOPT's ``derivative_test``.

For a :class:`~caspar_backend.problem.Problem` (or any evaluator) at a point
``x`` it compares

* the objective gradient with central differences of ``f``,
* the Jacobian with central differences of ``g`` (column by column),
* the Lagrangian Hessian ``obj_factor * H_f + sum_i lam_i H_gi`` with central
  differences of the Lagrangian gradient ``obj_factor * grad f + J^T lam``,

and reports every entry whose relative error
``|analytic - fd| / max(1, |fd|)`` exceeds ``tol`` (IPOPT's
``derivative_test_tol``), naming the variable and the constraint.  The
perturbation is ``h_j = step * max(1, |x_j|)`` (``derivative_test_perturbation``).
It costs O(n) evaluations: use it on small problems or at few points.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class DerivativeReport:
    """Result of :func:`check_derivatives` (final)."""

    max_rel_error: float
    errors: list = field(default_factory=list)  # (kind, row, col, analytic, fd, rel)
    #: every entry compared, as ``errors``' rows (with ``keep_all`` only)
    entries: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def __str__(self) -> str:
        head = (f"derivative check: max relative error {self.max_rel_error:.3e}, "
                f"{len(self.errors)} entries above tolerance")
        return "\n".join([head] + [f"  {k}[{r},{c}]: analytic {a:.10e}  fd {f:.10e}  rel {e:.2e}"
                                   for k, r, c, a, f, e in self.errors[:50]])


def check_derivatives(problem, x=None, lam=None, obj_factor=1.0, *, tol=1e-4, step=1e-6,
                      hessian=True, p=None, keep_all=False) -> DerivativeReport:
    """Compare analytic derivatives with central finite differences at ``x``; with
    ``keep_all`` the report lists every entry compared too (IPOPT's
    derivative_test_print_all)."""
    ev = problem.evaluator() if hasattr(problem, "evaluator") else problem
    if p is not None:
        ev.set_params(p)
    n, m = ev.n, ev.m
    rng = np.random.default_rng(0)
    x = np.asarray(problem.x0 if x is None else x, dtype=float).copy()
    lam = rng.standard_normal(m) if lam is None else np.asarray(lam, dtype=float)
    names_x = getattr(problem, "var_names", None) or [f"x[{j}]" for j in range(n)]
    names_g = getattr(problem, "con_names", None) or [f"g[{i}]" for i in range(m)]

    grad = ev.grad(x)
    jac = ev.jac(x).toarray()
    hess = ev.hess(x, lam, obj_factor).toarray() if hessian else None
    errors, entries, worst = [], [], 0.0

    def cmp(kind, row, col, a, f):
        nonlocal worst
        rel = abs(a - f) / max(1.0, abs(f))
        worst = max(worst, rel)
        if keep_all:
            entries.append((kind, row, col, a, f, rel))
        if rel > tol or not np.isfinite(a):
            errors.append((kind, row, col, a, f, rel))

    def lag_grad(xx):
        return obj_factor * ev.grad(xx) + ev.jac(xx).T @ lam

    for j in range(n):
        h = step * max(1.0, abs(x[j]))
        xp, xm = x.copy(), x.copy()
        xp[j] += h
        xm[j] -= h
        cmp("grad", "f", names_x[j], grad[j], (ev.obj(xp) - ev.obj(xm)) / (2 * h))
        dg = (ev.cons(xp) - ev.cons(xm)) / (2 * h)
        for i in np.flatnonzero((dg != 0) | (jac[:, j] != 0)):
            cmp("jac", names_g[i], names_x[j], jac[i, j], dg[i])
        if hessian:
            dl = (lag_grad(xp) - lag_grad(xm)) / (2 * h)
            for i in np.flatnonzero((dl != 0) | (hess[:, j] != 0)):
                cmp("hess", names_x[i], names_x[j], hess[i, j], dl[i])
    return DerivativeReport(worst, errors, entries)
