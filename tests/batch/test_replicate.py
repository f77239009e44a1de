"""The replicated problem: its tables follow the module's formulas, its templates are
the single problem's objects, and its tiled layout equals ``Layout.of`` of it."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.batch.replicate import ReplicatedProblem
from caspar_backend.evaluators.layout import Layout
from tests.batch import problems

pytest.importorskip("casadi")

#: duplicate Jacobian pairs and split rows (wide), blocks (mx_map, mx_map_reduce), m = 0
#: (hs038), a constant objective, parameters (ik, sx_params)
NAMES = ["wide", "mx_map", "mx_map_reduce", "hs038", "constant_objective", "ik", "sx_params"]


def _same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return tuple(a) == tuple(b)


@pytest.mark.parametrize("B", [1, 2, 5])
@pytest.mark.parametrize("name", NAMES)
def test_tiled_layout_equals_layout_of(name, B):
    prob, _ = problems.build(name)
    rep = ReplicatedProblem(prob, B)
    want = Layout.of(rep)
    for field in Layout.__dataclass_fields__:
        if field == "jac_plan":         # optional (None: made from jac_map): the plans
            a, b = _jac_plan(rep.layout), _jac_plan(want)
            assert (a is None) == (b is None) and (a is None or all(
                _same(getattr(a, f), getattr(b, f)) for f in ("perm", "ptr", "dst")))
            continue
        assert _same(getattr(rep.layout, field), getattr(want, field)), field


def _jac_plan(lay):
    """The segment-sum plan of ``lay``'s duplicate Jacobian entries, or None."""
    from caspar_backend.evaluators.layout import SegmentPlan

    if lay.jac_map is None:
        return None
    return lay.jac_plan or SegmentPlan.of(lay.jac_map, len(lay.jac_rows))


@pytest.mark.parametrize("name", NAMES)
def test_tables_and_shared_templates(name):
    prob, _ = problems.build(name)
    B = 4
    rep = ReplicatedProblem(prob, B)
    n, q, m1 = prob.n, prob.n_params, prob.m + 1
    assert (rep.n, rep.m, rep.n_params) == (B * n, B * m1, B * q)
    assert rep.objective_groups == []
    np.testing.assert_array_equal(rep.p, np.tile(prob.p, B))
    single = prob.objective_groups + prob.constraint_groups
    assert len(rep.constraint_groups) == len(single)
    for k, (g1, g) in enumerate(zip(single, rep.constraint_groups)):
        assert g.root is g1.root and g.graph is g1.graph
        assert g.grad is g1.grad and g.hess is g1.hess
        N = g1.size
        rows1 = np.zeros(N, np.int64) if k < len(prob.objective_groups) else g1.rows + 1
        for b in (0, B - 1):
            cols = slice(b * N, (b + 1) * N)
            np.testing.assert_array_equal(g.var_table[:, cols], g1.var_table + b * n)
            np.testing.assert_array_equal(g.param_table[:, cols], g1.param_table + b * q)
            np.testing.assert_array_equal(g.data_table[:, cols], g1.data_table)
            np.testing.assert_array_equal(g.rows[cols], rows1 + b * m1)


def test_problem_set_covers_the_cases():
    """The problems of the batch tests between them have what the replicated layout
    treats specially (tests/batch/problems.py), so the equality tests exercise it."""
    seen = set()
    for name in problems.ALL_NAMES:
        prob, _ = problems.build(name)
        lay1 = ReplicatedProblem(prob, 1).layout
        k = len(prob.objective_groups)
        seen |= {tag for tag, on in [
            ("duplicate pairs", lay1.jac_map is not None),
            ("no duplicate pairs", lay1.jac_map is None),
            ("objective of one term", lay1.con_direct[0]),
            ("objective of many terms", not lay1.con_direct[0]),
            ("split rows", not all(lay1.con_direct[k:])),
            ("blocks", bool(prob.model.constraint_blocks or prob.model.objective_blocks)),
            ("no constraints", prob.m == 0),
            ("parameters", prob.n_params > 0),
            ("objective without gradient", not any(g.grad for g in prob.objective_groups)),
            ("duplicate Hessian entries",
             len(set(zip(lay1.hess_rows, lay1.hess_cols))) < len(lay1.hess_rows)),
        ] if on}
    assert len(seen) == 10, seen
