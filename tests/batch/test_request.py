"""A service request checked alone and requests stacked (:mod:`caspar_backend.batch.request`):
defaults taken from the model when the request is made, fresh copies of the caller's
arrays, a multiplier vector given by some requests only zero in the others' rows, and a
stack that ``solve_batch`` accepts with the answers of the single solves."""

import numpy as np
import pytest
from caspar_backend import Graph, NLPModel, Problem
from caspar_backend.batch.request import (FIELDS, checked_batch, checked_request, stacked,
                                          submitted)


def _problem():
    """min (x0 - p)^2 + (x1 - 2)^2 s.t. x0 + x1 <= 3: one parameter, one constraint."""
    g = Graph()
    x, p = [g.var(0), g.var(1)], g.param(0)
    return Problem(NLPModel(g, (x[0] - p) ** 2 + (x[1] - 2) ** 2, [x[0] + x[1]],
                            np.full(2, -10.0), np.full(2, 10.0), np.array([-np.inf]),
                            np.array([3.0]), x0=np.zeros(2), p=np.array([1.0])))


def test_defaults_are_the_models_now_and_copies():
    P = _problem()
    mine = np.array([5.0, 6.0])
    r = checked_request(P, x0=mine)
    mine[0] = 99.0
    assert r.x0.tolist() == [5.0, 6.0] and r.p.tolist() == [1.0]
    P.p = [4.0]                          # a later change does not reach a made request
    assert r.p.tolist() == [1.0] and checked_request(P).p.tolist() == [4.0]
    assert r.lbx.tolist() == [-10.0, -10.0] and r.ubg.tolist() == [3.0]
    assert r.lam_g0 is None and r.lam_x0 is None
    r.lbx[0] = 0.0                       # the request's bounds are not the model's arrays
    assert P.lbx[0] == -10.0
    assert checked_request(P, lbx=0.5).lbx.tolist() == [0.5, 0.5]   # scalars broadcast


def test_stacked_rows_and_missing_multipliers():
    P = _problem()
    rs = [checked_request(P, p=[1.0], lam_g0=[2.0]), checked_request(P, p=[2.0]),
          checked_request(P, p=[3.0], ubg=[2.5])]
    kw = stacked(rs)
    assert set(kw) == set(FIELDS)
    assert kw["p"].tolist() == [[1.0], [2.0], [3.0]]
    assert kw["lam_g0"].tolist() == [[2.0], [0.0], [0.0]] and kw["lam_x0"] is None
    assert kw["ubg"].tolist() == [[3.0], [3.0], [2.5]] and kw["x0"].shape == (3, 2)
    res = P.solve_batch(**kw, print_level=0)
    for b, r in enumerate(rs):
        s = P.solve(x0=r.x0, p=r.p, lbx=r.lbx, ubx=r.ubx, lbg=r.lbg, ubg=r.ubg,
                    lam_g0=r.lam_g0, print_level=0)
        assert (res.status[b], res.iterations[b]) == (s.status, s.iterations)
        np.testing.assert_allclose(res.x[b], s.x, rtol=1e-9, atol=1e-12)
    # x0 + x1 <= 2.5 binds for p = 3: x = (1.75, 0.75)
    np.testing.assert_allclose(res.x[2], [1.75, 0.75], atol=1e-7)


def test_errors_are_the_single_solves():
    P = _problem()
    for bad in (dict(p=[1.0, 2.0]), dict(x0=[1.0, 2.0, 3.0]), dict(ubx=[1.0, 2.0, 3.0]),
                dict(lbg=[4.0])):
        with pytest.raises(Exception) as single:
            P.solve(print_level=0, **bad)
        with pytest.raises(type(single.value)) as here:
            checked_request(P, **bad)
        assert str(here.value) == str(single.value)


def _same_kwargs(a: dict, b: dict):
    assert set(a) == set(b)
    for k in a:
        if a[k] is None or b[k] is None:
            assert a[k] is None and b[k] is None, k
        else:
            np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


def test_checked_batch_equals_checked_requests_stacked():
    """The vectorized check of a batch gives what checking each request alone and
    stacking gives: on plain requests (the array path), on a batch mixing scalars,
    missing and given multipliers (the one-by-one path), and with bad requests among
    good ones (each bad one's error is its checked_request error)."""
    P = _problem()
    plain = [dict(p=[1.0 + k], x0=[0.5, k]) for k in range(5)]
    mixed = [dict(p=[1.0]), dict(p=[2.0], lam_g0=[0.5]), dict(p=3.0, lbx=-1.0)]
    for reqs in ([dict(p=[1.0 + k]) for k in range(6)], plain, mixed):
        kw, valid, errors = checked_batch(P, [submitted(P, **r) for r in reqs])
        assert valid == list(range(len(reqs))) and errors == []
        _same_kwargs(kw, stacked([checked_request(P, **r) for r in reqs]))
    bad = [dict(p=[1.0]), dict(p=[np.nan]), dict(p=[2.0], lbx=[3.0, 0.0], ubx=[1.0, 1.0]),
           dict(x0=[0.0, 1.0, 2.0]), dict(p=[3.0])]
    kw, valid, errors = checked_batch(P, [submitted(P, **r) for r in bad])
    assert valid == [0, 4] and [i for i, _ in errors] == [1, 2, 3]
    _same_kwargs(kw, stacked([checked_request(P, **bad[i]) for i in valid]))
    for i, exc in errors:
        with pytest.raises(type(exc)) as info:
            checked_request(P, **bad[i])
        assert str(info.value) == str(exc)


def test_submitted_keeps_the_models_values_then_and_copies_the_callers():
    P = _problem()
    mine = np.array([5.0, 6.0])
    s = submitted(P, x0=mine)
    mine[0] = 99.0
    P.p = [4.0]
    kw, _, _ = checked_batch(P, [s])
    assert kw["x0"].tolist() == [[5.0, 6.0]] and kw["p"].tolist() == [[1.0]]
