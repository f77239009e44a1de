"""Batched LDL^T (:mod:`caspar_backend.batch.ldl`), NumPy backend.

* Ordering and symbolic phase: minimum degree removes an arrow matrix's fill and beats
  the natural order on a grid; L's pattern is the dense symbolic elimination's; the
  elimination tree and its levels are consistent.
* Numeric phase, per instance, on KKT patterns (random quasi-definite, indefinite with
  slacks or with AugmentedKKT's static regularization, the three-link arm compiled from
  CasADi, a banded MPC KKT): inertia equals eigvalsh's and QDLDL's; solves equal
  numpy.linalg.solve; matvec equals the dense product.  (Bit-for-bit equality with
  QDLDL: :mod:`.test_ldl_qdldl`.)
* ``active`` subsets leave the other instances' factors bit for bit; a zero or NaN
  pivot in one instance reports n_zero > 0 there only.
* The Python-level work of factorize and solve is the same for two patterns with the
  same number of levels and 15x different nnz(L).
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.batch.ldl import BatchLDL
from caspar_backend.batch.ldl_host import HostLDL
from caspar_backend.batch.ldl_order import minimum_degree
from caspar_backend.batch.ldl_symbolic import plan_ldl
from caspar_backend.linsolve.base import SparseStructure
from caspar_backend.linsolve.qdldl import QDLDLSolver

from . import qdldl_reference
from .ldl_support import arm_case, dense, kkt_case, mpc_case, reference_inertia

pytest.importorskip("qdldl")


def _structure(M) -> SparseStructure:
    """Upper-triangle CSC structure of a symmetric pattern (dense bool or sparse)."""
    U = sp.triu(sp.csc_matrix(M, dtype=float) + sp.eye(M.shape[0])).tocsc()
    U.sort_indices()
    return SparseStructure(U.shape[0], U.indptr.astype(np.int64), U.indices.astype(np.int64))


def _eliminate(M, perm):
    """Dense symbolic elimination: the strictly lower pattern of L (bool (n, n))."""
    C = (np.asarray(M) != 0)[np.ix_(perm, perm)].copy()
    n = len(C)
    for k in range(n):
        r = k + 1 + np.flatnonzero(C[k + 1:, k])
        C[np.ix_(r, r)] = True
    return np.tril(C, -1)


def _eig_inertia(K):
    ev = np.linalg.eigvalsh(K)
    return int((ev > 0).sum()), int((ev < 0).sum()), 0


#: cases that factorize (every pivot nonzero): name -> (structure, values)
CASES = {
    "quasi_definite": lambda: kkt_case(0),
    "quasi_definite_dense_w": lambda: kkt_case(1, nx=9, m=6, w_density=0.9),
    "indefinite_slacks": lambda: kkt_case(2, n_slack=5, delta_c=0.0, convex=False),
    "indefinite_static_reg": lambda: kkt_case(3, n_slack=2, delta_c=0.0, convex=False,
                                              eps=1e-8),
    "mpc": lambda: mpc_case(4, T=6),
}


def _case(name):
    if name == "arm":
        pytest.importorskip("casadi")
        return arm_case(5)
    return CASES[name]()


ALL = [*CASES, "arm"]


# ====================================================================== ordering, symbolic
def test_minimum_degree_eliminates_an_arrow_without_fill():
    n = 20
    M = np.eye(n)
    M[0, :] = M[:, 0] = 1.0
    s = _structure(M)
    perm = minimum_degree(n, s.indptr, s.indices)
    assert sorted(perm.tolist()) == list(range(n))
    assert 0 in perm[-2:]                      # the hub last (tied with one leaf)
    assert BatchLDL(s, 1, dense=False).nnz_l == n - 1
    assert BatchLDL(s, 1, perm=np.arange(n), dense=False).nnz_l == n * (n - 1) // 2


def test_minimum_degree_beats_the_natural_order_on_a_grid():
    k = 12
    lap = sp.kronsum(sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], (k, k)),
                     sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], (k, k)))
    s = _structure(lap)
    natural = BatchLDL(s, 1, perm=np.arange(k * k), dense=False).nnz_l
    md = BatchLDL(s, 1, dense=False).nnz_l
    assert md < 0.8 * natural, (md, natural)


@pytest.mark.parametrize("seed", range(4))
def test_symbolic_pattern_is_the_dense_elimination(seed):
    rng = np.random.default_rng(seed)
    n = 25
    M = rng.random((n, n)) < 0.12
    M = M | M.T
    s = _structure(M)
    for perm in (None, rng.permutation(n)):
        pl = plan_ldl(s, perm)
        want = _eliminate(M | np.eye(n, dtype=bool), pl.perm)
        got = np.zeros((n, n), bool)
        got[pl.li, np.repeat(np.arange(n), np.diff(pl.lp))] = True
        assert np.array_equal(got, want)
        # parent = first row of the column; a parent's level exceeds its child's
        for j in range(n):
            rows = pl.li[pl.lp[j]:pl.lp[j + 1]]
            assert pl.parent[j] == (rows[0] if len(rows) else -1)
            if pl.parent[j] >= 0:
                assert pl.level[pl.parent[j]] > pl.level[j]
        # layout: every factor row is used once
        rows = np.concatenate([pl.diag_row, pl.off_row])
        assert np.array_equal(np.sort(rows), np.arange(pl.n_f))


def test_op_tables_do_not_depend_on_the_generation_slices(monkeypatch):
    from caspar_backend.batch import ldl_symbolic

    s, _ = mpc_case(16, T=4, B=1)
    whole = plan_ldl(s)
    monkeypatch.setattr(ldl_symbolic, "OPS_SLICE", 7)
    sliced = plan_ldl(s)
    for name in ("op_ptr", "op_t", "op_l"):
        assert np.array_equal(getattr(whole, name), getattr(sliced, name))


def test_plan_rejects_a_non_permutation():
    s = _structure(np.eye(3))
    with pytest.raises(ValueError):
        plan_ldl(s, [0, 0, 1])


# ====================================================================== numeric, per instance
@pytest.mark.parametrize("name", ALL)
def test_inertia_equals_eigvalsh_and_qdldl(name):
    s, v = _case(name)
    f = BatchLDL(s, len(v), dense=False)
    pos, neg, zero = f.factorize(v)
    assert pos.dtype == np.int64 and pos.shape == (len(v),)
    q = QDLDLSolver()
    q.analyse(s)
    for b in range(len(v)):
        got = (int(pos[b]), int(neg[b]), int(zero[b]))
        assert got == _eig_inertia(dense(s, v[b]))
        assert got == q.factorize(v[b]).inertia


#: the static term's 1e-8 constraint pivots give factors growing like 1e8: only
#: refinement makes that case's solve accurate (test_refinement_...)
WELL_CONDITIONED = [c for c in ALL if c != "indefinite_static_reg"]


@pytest.mark.parametrize("name", WELL_CONDITIONED)
def test_solve_equals_numpy_solve(name):
    s, v = _case(name)
    B = len(v)
    f = BatchLDL(s, B, dense=False)
    f.factorize(v)
    rhs = np.random.default_rng(7).standard_normal((B, s.n))
    x = f.solve(rhs)
    for b in range(B):
        K = dense(s, v[b])
        want = np.linalg.solve(K, rhs[b])
        scale = np.linalg.cond(K) * 1e-14
        assert np.allclose(x[b], want, rtol=max(scale, 1e-12), atol=max(scale, 1e-12)
                           * np.abs(want).max())
    # out=, out=rhs itself
    out = np.empty_like(rhs)
    assert f.solve(rhs, out=out) is out and np.array_equal(out, x)
    r2 = rhs.copy()
    f.solve(r2, out=r2)
    assert np.array_equal(r2, x)


@pytest.mark.parametrize("name", ["quasi_definite", "mpc", "arm"])
def test_matvec_equals_the_dense_product(name):
    s, v = _case(name)
    B = len(v)
    f = BatchLDL(s, B, dense=False)
    x = np.random.default_rng(8).standard_normal((B, s.n))
    y = f.matvec(v, x)
    for b in range(B):
        want = dense(s, v[b]) @ x[b]
        assert np.allclose(y[b], want, rtol=1e-14, atol=1e-13 * np.abs(want).max())
    out = x.copy()
    assert f.matvec(v, out, out=out) is out and np.array_equal(out, y)


def test_refinement_with_matvec_and_solve_recovers_the_static_term():
    # AugmentedKKT's use: factorize K + E (E the static term), refine against K:
    # x <- x + (K + E)^-1 (r - K x) converges to K^-1 r
    s, v = kkt_case(9, nx=20, m=8, delta_c=0.0, convex=False, n_slack=3, eps=1e-8)
    _, v_k = kkt_case(9, nx=20, m=8, delta_c=0.0, convex=False, n_slack=3)
    B = len(v)
    f = BatchLDL(s, B, dense=False)
    f.factorize(v)
    r = np.random.default_rng(9).standard_normal((B, s.n))
    x = f.solve(r)
    for _ in range(5):
        x += f.solve(r - f.matvec(v_k, x))
    for b in range(B):
        want = np.linalg.solve(dense(s, v_k[b]), r[b])
        assert np.allclose(x[b], want, rtol=1e-9, atol=1e-9 * np.abs(want).max())


# ====================================================================== subsets, failures
def _state(f):
    e = f._engine
    return [a.copy() for a in (e.F, e.Lrow, e.D, e.n_pos, e.n_neg, e.n_zero)]


def test_active_subset_leaves_the_other_instances_bit_for_bit():
    s, v = kkt_case(10, B=14)
    v1, v2 = v[:7], v[7:]
    f = BatchLDL(s, 7, dense=False)
    f.factorize(v1)
    before = _state(f)
    active = np.array([5, 1, 3])
    pos, neg, zero = f.factorize(v2, active=active)
    after = _state(f)
    fresh = BatchLDL(s, 7, dense=False)
    fresh.factorize(v2)
    want = _state(fresh)
    rest = np.setdiff1d(np.arange(7), active)
    for a0, a1, w in zip(before, after, want):
        assert np.array_equal(a1[..., rest], a0[..., rest])
        assert np.array_equal(a1[..., active], w[..., active])
    rhs = np.random.default_rng(1).standard_normal((7, s.n))
    x = f.solve(rhs)
    x_old = BatchLDL(s, 7, dense=False)
    x_old.factorize(v1)
    assert np.array_equal(x[rest], x_old.solve(rhs)[rest])
    assert np.array_equal(x[active], fresh.solve(rhs)[active])
    # an empty subset changes nothing
    f.factorize(v1, active=np.zeros(0, np.int64))
    assert all(np.array_equal(a, b) for a, b in zip(_state(f), after))


def test_a_bad_pivot_fails_its_instance_only():
    s, v = kkt_case(12, B=6)
    f = BatchLDL(s, 6, dense=False)
    pl = f.plan
    bad = v.copy()
    bad[2] = 0.0                                # first pivot 0
    bad[3, 0] = np.nan                          # a NaN entry
    # an exact zero pivot late in the order: the diagonal of the last leaf column
    leaves = np.flatnonzero(pl.level == 0)
    k = int(leaves.max())
    bad[4, pl.diag_pos[pl.perm[k]]] = 0.0
    pos, neg, zero = f.factorize(bad)
    clean = BatchLDL(s, 6, dense=False)
    cpos, cneg, czero = clean.factorize(v)
    ok = [0, 1, 5]
    assert (zero[ok] == 0).all() and (zero[[2, 3, 4]] > 0).all()
    assert zero[2] == s.n
    assert pos[4] + neg[4] == k                 # the pivots before k
    for b in (2, 3, 4):
        d_ref = qdldl_reference.factor(s.indptr, s.indices, bad[b], pl.perm).d
        assert (pos[b], neg[b], zero[b]) == reference_inertia(d_ref)
    e, ce = f._engine, clean._engine
    for a, ca in ((e.F, ce.F), (e.D, ce.D), (e.Lrow, ce.Lrow)):
        assert np.array_equal(a[:, ok], ca[:, ok])
    rhs = np.ones((6, s.n))
    assert np.array_equal(f.solve(rhs)[ok], clean.solve(rhs)[ok])


def test_inertia_before_any_factorization_is_all_zero_pivots():
    s, v = kkt_case(13, B=3)
    f = BatchLDL(s, 3, dense=False)
    pos, neg, zero = f.factorize(v, active=np.array([1]))
    assert zero.tolist() == [s.n, 0, s.n] and pos[1] + neg[1] == s.n


def test_bad_shapes_and_indices_raise():
    s, v = kkt_case(14, B=3)
    f = BatchLDL(s, 3, dense=False)
    with pytest.raises(ValueError):
        f.factorize(v[:2])
    with pytest.raises(ValueError):
        f.factorize(v, active=np.array([3]))
    with pytest.raises(ValueError):
        f.solve(np.zeros((3, s.n + 1)))
    with pytest.raises(ValueError):
        f.matvec(v, np.zeros((2, s.n)))


def test_chunked_levels_give_the_same_bits():
    # a product buffer of a few elements splits every level into single rows
    s, v = mpc_case(15, T=6, B=3)
    pl = plan_ldl(s)
    whole, chunked = HostLDL(pl, 3), HostLDL(pl, 3, work_elements=4)
    assert sum(len(st[3]) for st in chunked._factor_steps) > pl.n_levels
    whole.factorize(v)
    chunked.factorize(v)
    assert np.array_equal(whole.F, chunked.F)
    rhs = np.random.default_rng(2).standard_normal((3, s.n))
    assert np.array_equal(whole.solve(rhs), chunked.solve(rhs))


# ====================================================================== Python-level work
def _calls(fn) -> int:
    """Python and C function calls made while ``fn()`` runs."""
    count = [0]

    def prof(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]


def test_python_work_does_not_grow_with_nnz_l():
    # natural order: a tridiagonal and a dense matrix both have a path as elimination
    # tree (n levels), with nnz(L) = n - 1 and n (n - 1) / 2
    n, B = 30, 4
    rng = np.random.default_rng(3)
    counts = {}
    for name, M in (("tridiagonal", sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], (n, n)).toarray()),
                    ("dense", np.ones((n, n)))):
        s = _structure(M)
        f = BatchLDL(s, B, perm=np.arange(n), dense=False)
        assert f.n_levels == n
        v = rng.standard_normal((B, s.nnz))
        v[:, f.plan.diag_pos] += 4 * n
        f.factorize(v)
        rhs = rng.standard_normal((B, n))
        counts[name] = (f.nnz_l, _calls(lambda: f.factorize(v)),
                        _calls(lambda: f.solve(rhs)))
    (l_tri, fac_tri, sol_tri), (l_dense, fac_dense, sol_dense) = \
        counts["tridiagonal"], counts["dense"]
    assert l_dense >= 14 * l_tri
    # (a few calls may differ: the transposes of rows of different lengths)
    assert abs(fac_dense - fac_tri) <= 4 and abs(sol_dense - sol_tri) <= 4
    # and the count is a fixed number of calls per level
    assert fac_tri < 40 * n and sol_tri < 40 * n
