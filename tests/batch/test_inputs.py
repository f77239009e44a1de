"""The inputs of solve_batch (caspar_backend/batch/inputs.py): the one fused validity test
finds the first bad instance that the elementwise rule (each bound pair: NaN, lower >
upper, +inf lower, -inf upper; x0 finite; then p finite) finds, with its error; a row
shared by every instance stays one row in memory but never the caller's; IPOPT's
nlp_*_bound_inf applies to every instance; shared bounds make one structure group, with
the answers of the same bounds given row by row."""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend import Graph, NLPModel, Problem
from caspar_backend.batch.inputs import batch_inputs, shared_row, with_infinite_bounds
from caspar_backend.batch.solve import _structure_groups
from caspar_backend.errors import ModelError
from caspar_backend.solver.options import infinite_bounds
from tests.batch.same import assert_identical


def _problem():
    """min (x0 - p)^2 + (x1 - 2)^2 s.t. x0 + x1 <= 3, x0 - x1 >= -1."""
    g = Graph()
    x, p = [g.var(0), g.var(1)], g.param(0)
    return Problem(NLPModel(g, (x[0] - p) ** 2 + (x[1] - 2) ** 2, [x[0] + x[1], x[0] - x[1]],
                            np.full(2, -10.0), np.full(2, 10.0), np.array([-np.inf, -1.0]),
                            np.array([3.0, np.inf]), x0=np.zeros(2), p=np.array([1.0])))


def _first_bad(x0, p, lbx, ubx, lbg, ubg):
    """The elementwise rule, one test per kind: ('bounds', b), ('p', b) or None."""
    bad = np.zeros(len(x0), bool)
    for lo, hi in ((lbx, ubx), (lbg, ubg)):
        bad |= np.any(np.isnan(lo) | np.isnan(hi) | (lo > hi) | (lo == np.inf)
                      | (hi == -np.inf), axis=1)
    bad |= ~np.all(np.isfinite(x0), axis=1)
    if bad.any():
        return "bounds", int(np.flatnonzero(bad)[0])
    badp = ~np.all(np.isfinite(p), axis=1)
    return ("p", int(np.flatnonzero(badp)[0])) if badp.any() else None


@pytest.mark.parametrize("seed", range(40))
def test_the_fused_check_finds_the_elementwise_rules_first_bad_instance(seed):
    P = _problem()
    rng = np.random.default_rng(seed)
    B = 6
    inp = dict(x0=rng.uniform(-1, 1, (B, 2)), p=rng.uniform(-1, 1, (B, 1)),
               lbx=rng.uniform(-5, 0, (B, 2)), ubx=rng.uniform(0, 5, (B, 2)),
               lbg=np.tile([-np.inf, -1.0], (B, 1)), ubg=np.tile([3.0, np.inf], (B, 1)))
    specials = (np.nan, np.inf, -np.inf, 7.0, -7.0, np.finfo(float).max)
    for _ in range(rng.integers(0, 3)):     # a few entries spoiled (or none)
        name = rng.choice(list(inp))
        a = inp[name]
        a[rng.integers(B), rng.integers(a.shape[1])] = rng.choice(specials)
    if seed % 4 == 0:                       # both sides of a bound one infinity
        lo, hi = ("lbx", "ubx") if seed % 8 else ("lbg", "ubg")
        b, j = rng.integers(1, B), rng.integers(2)
        inp[lo][b, j] = inp[hi][b, j] = rng.choice((np.inf, -np.inf))
    want = _first_bad(**inp)
    if want is None:
        got = batch_inputs(P, **inp)
        for k, v in inp.items():
            np.testing.assert_array_equal(getattr(got, k), v)
        return
    with pytest.raises(ModelError) as err:
        batch_inputs(P, **inp)
    kind, b = want
    assert str(err.value).startswith(f"instance {b}: "), (want, str(err.value))
    assert ("parameter vector p" in str(err.value)) == (kind == "p")


def test_shared_rows_stay_shared_and_are_never_the_callers():
    P = _problem()
    row = np.array([-3.0, -4.0])
    shared = np.broadcast_to(row, (5, 2))
    full = np.tile([0.5, 0.25], (5, 1))
    inp = batch_inputs(P, p=np.arange(5.0)[:, None], lbx=shared, x0=full)
    assert shared_row(inp.lbx) and inp.lbx.shape == (5, 2)
    assert not np.shares_memory(inp.lbx, row) and not np.shares_memory(inp.x0, full)
    assert not shared_row(inp.x0) and not shared_row(inp.p)
    assert shared_row(inp.ubx) and shared_row(inp.lbg)        # the model's, one row
    assert not inp.lbx.flags.writeable and not inp.ubx.flags.writeable
    row[0], full[0, 0] = 99.0, 99.0          # a later change of the caller's arrays...
    np.testing.assert_array_equal(inp.lbx, np.tile([-3.0, -4.0], (5, 1)))   # ...is not seen
    np.testing.assert_array_equal(inp.x0, np.tile([0.5, 0.25], (5, 1)))
    assert shared_row(batch_inputs(P, p=[[1.0]]).x0)          # one instance


def test_bounds_past_nlp_bound_inf_are_infinite_in_every_instance():
    P = _problem()
    lbx = np.array([[-1e20, -10.0], [-10.0, -2.0], [-10.0, -10.0]])
    inp = batch_inputs(P, p=np.zeros((3, 1)), lbx=lbx, ubg=[3.0, 2e19])
    out = with_infinite_bounds(inp, -1e19, 1e19)
    want = infinite_bounds(-1e19, 1e19, inp.lbx, inp.ubx, inp.lbg, inp.ubg)
    for k, w in zip(("lbx", "ubx", "lbg", "ubg"), want):
        np.testing.assert_array_equal(getattr(out, k), w)
    assert out.lbx[0, 0] == -np.inf and out.ubg[2, 1] == np.inf and out.lbx[1, 1] == -2.0
    # nothing that far: the same inputs back; a looser option moves another bound
    assert with_infinite_bounds(out, -1e19, 1e19) is out
    assert with_infinite_bounds(out, -5.0, 1e19).lbx[1].tolist() == [-np.inf, -2.0]


def test_shared_bounds_are_one_group_with_the_answers_of_the_same_rows_given_each():
    P = _problem()
    T = np.linspace(-2.0, 2.0, 7)[:, None]
    lbx = np.broadcast_to(np.array([-1.5, -10.0]), (7, 2))
    inp = batch_inputs(P, p=T, lbx=lbx)
    groups = _structure_groups(inp)
    assert len(groups) == 1 and groups[0].tolist() == list(range(7))
    one = P.solve_batch(p=T, lbx=lbx, print_level=0)
    rows = P.solve_batch(p=T, lbx=np.array(lbx), print_level=0)   # a (7, 2) copy
    assert_identical(one, rows)
    # bounds that differ in structure (a fixed variable in two instances): two groups,
    # the larger first, as before
    lbx2 = np.array(lbx)
    lbx2[[2, 5], 0] = 10.0
    ubx2 = np.full((7, 2), 10.0)
    groups = _structure_groups(batch_inputs(P, p=T, lbx=lbx2, ubx=ubx2))
    assert [g.tolist() for g in groups] == [[0, 1, 3, 4, 6], [2, 5]]


def test_an_empty_batch_is_an_empty_result_of_the_same_shapes():
    """B = 0 (a (0, k) input or batch_size=0) answers zero rows -- (0, n), (0, m), (0,)
    -- after the options and the device are checked, as code vectorized over rows does."""
    from caspar_backend.errors import DeviceError, OptionError

    P = _problem()
    for kw in (dict(p=np.zeros((0, 1))), dict(batch_size=0),
               dict(x0=np.zeros((0, 2)), lbx=[-1.0, -1.0])):
        r = P.solve_batch(**kw)
        assert len(r) == 0 and list(r) == [] and r.status == [] and r.path == []
        assert r.x.shape == r.lam_x.shape == (0, 2) and r.g.shape == r.lam_g.shape == (0, 2)
        assert r.f.shape == r.iterations.shape == (0,) and not r.success.any()
    with pytest.raises(OptionError, match="no_such_option"):
        P.solve_batch(batch_size=0, no_such_option=1)
    with pytest.raises(DeviceError, match="unknown device"):
        P.solve_batch(batch_size=0, device="tpu")


@pytest.mark.parametrize("bad", [-1, 2.5, True, "3"])
def test_batch_size_must_be_a_whole_number(bad):
    with pytest.raises(ModelError, match="batch_size must be a whole number >= 0"):
        batch_inputs(_problem(), bad)


@pytest.mark.parametrize("name", ["x0", "p", "lbx", "lbg", "lam_g0"])
def test_an_input_that_is_not_numbers_names_itself(name):
    with pytest.raises(ModelError, match=f"solve_batch: {name} must be numbers"):
        batch_inputs(_problem(), **{name: "abc"})
    with pytest.raises(ModelError, match=f"solve_batch: {name} must be numbers"):
        batch_inputs(_problem(), **{name: [[1.0, object()]]})
