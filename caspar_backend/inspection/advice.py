"""Modeling advice from the expression graph and the derivatives at a point.

``modeling_advice(problem, x)`` -> :class:`Advice`, a list of :class:`AdviceItem`
(``kind``, ``message``, ``count``), each naming a component.  Kinds:

``domain``
    a function evaluated near the edge of its domain without a bound that keeps it
    inside: ``log``/``log10`` (needs u > 0), ``log1p`` (u > -1), ``sqrt`` (u > 0 for
    its derivative), ``pow(u, c)`` with a non-integer constant c (u > 0), ``u1 / u``
    (u bounded away from 0), ``asin``/``acos`` (|u| <= 1), ``atanh`` (|u| < 1) -- where
    u is a variable of the template and that variable's bounds do not keep it inside
    (checked for every instance at once: the template's slot column of its variable
    table against ``lbx``/``ubx``).  An interior-point method may step there: IPOPT
    users add such bounds.
``dense_row``
    a constraint row with at least :data:`DENSE_ROW_MIN` nonzeros and a tenth of the
    variables: it fills the KKT factorization.
``scaling``
    at ``x``, objective gradient or constraint rows / variable columns whose largest
    derivative exceeds :data:`BAD_SCALE` or is below ``1/BAD_SCALE`` (but nonzero):
    the solver's gradient scaling (IPOPT's ``nlp_scaling_max_gradient``) shrinks large
    ones, small ones stay as they are.
``nonfinite``
    a NaN or Inf in f, g or the Jacobian at ``x``, naming the row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..expr import topo_order

#: rows with at least this many nonzeros (and n/10) are reported as dense
DENSE_ROW_MIN = 1000
#: derivative magnitudes beyond this (or below its inverse) are reported as badly scaled
BAD_SCALE = 1e6


@dataclass(frozen=True)
class AdviceItem:
    kind: str
    message: str
    count: int = 1


@dataclass(frozen=True)
class Advice:
    """Final.  The items in the order of the module docstring's kinds."""

    items: list = field(default_factory=list)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __str__(self) -> str:
        if not self.items:
            return "caspar modeling advice: nothing to report"
        return "\n".join(["caspar modeling advice:"]
                         + [f"  [{a.kind}] {a.message}" for a in self.items])


# (op, argument position) -> (what the argument needs, test of unsafe bounds)
def _needs_positive(lb, ub):
    return lb <= 0.0


_DOMAIN = {
    "log": (0, "u > 0", _needs_positive),
    "log10": (0, "u > 0", _needs_positive),
    "sqrt": (0, "u > 0 for its derivative", _needs_positive),
    "log1p": (0, "u > -1", lambda lb, ub: lb <= -1.0),
    "div": (1, "u bounded away from 0", lambda lb, ub: (lb <= 0.0) & (ub >= 0.0)),
    "asin": (0, "|u| <= 1", lambda lb, ub: (lb < -1.0) | (ub > 1.0)),
    "acos": (0, "|u| <= 1", lambda lb, ub: (lb < -1.0) | (ub > 1.0)),
    "atanh": (0, "|u| < 1", lambda lb, ub: (lb <= -1.0) | (ub >= 1.0)),
}


def _where(problem, group, i) -> str:
    if group.kind == "objective":
        return "the objective"
    return f"constraint {problem.con_names[int(group.rows[i])]}"


def _domain_items(problem) -> list:
    lbx, ubx = np.asarray(problem.lbx, float), np.asarray(problem.ubx, float)
    names = problem.var_names
    out = []
    for g in problem.groups:
        for node in topo_order([g.root]):
            op = node.op
            rule = _DOMAIN.get(op)
            if op == "pow" and node.args[1].is_const and \
                    float(node.args[1].attr) != round(float(node.args[1].attr)):
                rule = (0, "u > 0 for a non-integer power", _needs_positive)
            if rule is None:
                continue
            pos, need, unsafe = rule
            arg = node.args[pos]
            if arg.op != "var":
                continue
            cols = g.var_table[int(arg.attr)]
            bad = np.flatnonzero(unsafe(lbx[cols], ubx[cols]))
            if not bad.size:
                continue
            i = int(bad[0])
            v = names[int(cols[i])]
            more = f" (and {bad.size - 1:,} more instances of this template)" if bad.size > 1 else ""
            out.append(AdviceItem("domain", (
                f"{op} of {v} in {_where(problem, g, i)}{more} needs {need.replace('u', v, 1)},"
                f" but {v} has bounds [{lbx[cols[i]]:g}, {ubx[cols[i]]:g}]: add a bound that "
                f"keeps it inside (an interior-point step may leave the domain)"), int(bad.size)))
    return out


def _dense_rows(problem, lay) -> list:
    if not problem.m:
        return []
    nnz = np.bincount(lay.jac_rows, minlength=problem.m)
    dense = np.flatnonzero(nnz >= max(DENSE_ROW_MIN, problem.n // 10))
    if not dense.size:
        return []
    worst = int(dense[np.argmax(nnz[dense])])
    return [AdviceItem("dense_row", (
        f"{dense.size:,} dense constraint rows; the densest, "
        f"{problem.con_names[worst]}, has {int(nnz[worst]):,} nonzeros of {problem.n:,} "
        "variables: it fills the KKT factorization (introduce a variable for a shared sum)"),
        int(dense.size))]


def _scale_items(label, names, peak) -> list:
    out = []
    for what, mask in (("large", peak > BAD_SCALE), ("small", (peak > 0) & (peak < 1 / BAD_SCALE))):
        idx = np.flatnonzero(mask)
        if idx.size:
            k = int(idx[np.argmax(peak[idx])] if what == "large" else idx[np.argmin(peak[idx])])
            out.append(AdviceItem("scaling", (
                f"{idx.size:,} {label} with {what} derivatives at x (|d| {'>' if what == 'large' else '<'} "
                f"{BAD_SCALE if what == 'large' else 1 / BAD_SCALE:g}); e.g. {names[k]}: "
                f"max |d| = {peak[k]:.3g} -- rescale it"), int(idx.size)))
    return out


def _point_items(problem, x) -> list:
    ev = problem.evaluator("cpu")
    x = np.asarray(problem.x0 if x is None else x, float).reshape(-1)
    out = []
    f = float(ev.obj(x))
    g = np.asarray(ev.cons(x)) if problem.m else np.zeros(0)
    if not np.isfinite(f):
        out.append(AdviceItem("nonfinite", f"the objective is {f} at x"))
    bad = np.flatnonzero(~np.isfinite(g))
    if bad.size:
        out.append(AdviceItem("nonfinite", (
            f"{bad.size:,} constraint values are NaN or Inf at x, e.g. "
            f"{problem.con_names[int(bad[0])]} = {g[bad[0]]}"), int(bad.size)))
    grad = np.abs(np.asarray(ev.grad(x)))
    if np.isfinite(grad).all() and grad.max(initial=0.0) > BAD_SCALE:
        k = int(np.argmax(grad))
        out.append(AdviceItem("scaling", (
            f"the objective's gradient is large at x: |df/d{problem.var_names[k]}| = "
            f"{grad[k]:.3g} (> {BAD_SCALE:g}) -- rescale the objective")))
    if problem.m:
        J = abs(ev.jac(x).tocsr())
        vals = J.data
        if not np.isfinite(vals).all():
            rows = np.repeat(np.arange(problem.m), np.diff(J.indptr))[~np.isfinite(vals)]
            out.append(AdviceItem("nonfinite", (
                f"the Jacobian has NaN or Inf entries at x, e.g. in row "
                f"{problem.con_names[int(rows[0])]}"), int(np.unique(rows).size)))
        else:
            out += _scale_items("constraint rows", problem.con_names,
                                np.asarray(J.max(axis=1).todense()).reshape(-1))
            out += _scale_items("variable columns", problem.var_names,
                                np.asarray(J.max(axis=0).todense()).reshape(-1))
    return out


def modeling_advice(problem, x=None) -> Advice:
    from ..evaluators.layout import Layout

    lay = Layout.of(problem)
    items = _domain_items(problem) + _dense_rows(problem, lay) + _point_items(problem, x)
    order = {"domain": 0, "dense_row": 1, "scaling": 2, "nonfinite": 3}
    return Advice(sorted(items, key=lambda a: order[a.kind]))
