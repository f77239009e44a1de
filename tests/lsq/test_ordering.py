"""Ceres' ``linear_solver_ordering``: the Schur split given by the caller, checked, and
the same solve as the split found from the pattern; the GPU's pattern object on NumPy."""

import numpy as np
import pytest

from caspar_backend.errors import ModelError
from caspar_backend.lsq.device_pattern import DevicePattern
from caspar_backend.lsq.device_schur import DeviceDenseSchur
from caspar_backend.lsq.jacobian import SparseJacobian
from caspar_backend.lsq.linear_solvers import DenseNormalCholesky
from caspar_backend.lsq.ordering import structure_from_ordering
from caspar_backend.lsq.structure import detect_schur_structure

from .bal import bal_problem

NC, NPT = 8, 60


@pytest.fixture(scope="module")
def bal():
    return bal_problem(NC, NPT, 4)[0]


def _ordering():
    points = 9 * NC + 3 * np.arange(NPT)[:, None] + np.arange(3)
    cameras = 9 * np.arange(NC)[:, None] + np.arange(9)
    return [points, cameras]


def _blocks(pattern, st):
    """The eliminated blocks as sets of variables."""
    e = np.asarray(st.e_cols)
    return {frozenset(pattern.free[r[r >= 0]].tolist()) for r in e}


def test_ordering_gives_the_detected_split(bal):
    pat = bal.reduced_pattern()
    given = structure_from_ordering(pat, _ordering(), bal.n)
    found = detect_schur_structure(pat)
    assert _blocks(pat, given) == _blocks(pat, found)
    assert given.n_e == found.n_e and given.n_f == found.n_f
    # each row's block: the block holding the row's point
    e = np.asarray(given.e_cols)
    for r in np.flatnonzero(given.row_eb >= 0)[:50]:
        cols = pat.cols[pat.rows == r]
        assert set(e[given.row_eb[r]][e[given.row_eb[r]] >= 0]) <= set(cols)


def test_solve_with_ordering_equals_solve_without(bal):
    a = bal.solve()
    b = bal.solve(linear_solver_ordering=_ordering())
    assert b.linear_solver_type == a.linear_solver_type == "DENSE_SCHUR"
    assert b.num_iterations == a.num_iterations
    assert b.final_cost == pytest.approx(a.final_cost, rel=1e-10)
    # a re-solve with the same ordering reuses the cached structures, same bits
    c = bal.solve(linear_solver_ordering=_ordering())
    np.testing.assert_array_equal(b.x, c.x)


@pytest.mark.parametrize("groups,message", [
    (lambda o: [o[0] + 10 ** 6, o[1]], "outside"),
    (lambda o: [o[0], np.r_[o[1].ravel(), 9 * NC][:, None]], "more than one block"),
    # camera 1's first three parameters eliminated with the points: rows share them
    (lambda o: [np.vstack([o[0], 9 + np.arange(3)[None, :]])], "two eliminated blocks"),
])
def test_bad_orderings_are_named(bal, groups, message):
    with pytest.raises(ModelError, match=message):
        bal.solve(linear_solver_ordering=groups(_ordering()))


def test_device_pattern_and_dense_w_step_on_numpy(bal):
    """The GPU's pattern object built on NumPy: the host pattern and CSR, the products,
    and the dense-W Schur step over the ordering's split equal to the full step."""
    ev = bal.evaluator()
    dp = DevicePattern(ev, bal.lbx, bal.ubx, bal.m, np)
    host = bal.reduced_pattern()
    jac = SparseJacobian(host)
    np.testing.assert_array_equal(dp.rows, host.rows)
    np.testing.assert_array_equal(dp.cols, host.cols)
    np.testing.assert_array_equal(dp.indptr, jac.indptr)
    rng = np.random.default_rng(4)
    x = bal.x0 + 0.01 * rng.standard_normal(bal.n)
    vals = np.asarray(ev.jac_values(x))[host.keep]
    r = np.asarray(ev.cons(x)).copy()
    v = rng.standard_normal(host.n)
    np.testing.assert_allclose(dp.matvec(vals, v), jac.matvec(vals, v), rtol=1e-13)
    np.testing.assert_allclose(dp.rmatvec(vals, r), jac.rmatvec(vals, r), rtol=1e-13)
    d = rng.uniform(0.01, 1.0, host.n)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    st = structure_from_ordering(dp, _ordering(), bal.n, np)
    step = DeviceDenseSchur(dp, st, np).solve(vals, r, d)
    np.testing.assert_allclose(step, full, rtol=1e-7, atol=1e-9 * np.abs(full).max())
