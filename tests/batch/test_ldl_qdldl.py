"""Batched LDL^T against QDLDL, bit for bit (the order of :mod:`caspar_backend.batch.ldl_symbolic`).

* The scalar reference :mod:`.qdldl_reference` equals ``qdldl.Solver`` (factors and
  solves) bit for bit in qdldl's AMD order, so it may stand in for QDLDL in the orders
  qdldl cannot be given.
* In QDLDL's permutation, per instance: ``BatchLDL.factors`` equals
  ``qdldl.Solver.factors()`` (L's pattern and values, D, P), the inertia equals the
  single path's ``QDLDLSolver.factorize``, ``solve`` equals ``qdldl.Solver.solve`` and
  ``matvec`` equals ``QDLDLSolver.matvec``, all with ``np.array_equal``: random KKT
  matrices (quasi-definite; indefinite with slacks; indefinite with AugmentedKKT's static
  regularization), the three-link-arm KKT, MPC KKTs of 64 and 904 rows, and every matrix
  caspar's single CPU path factorized while solving bank problems (recorded).
* In other orders (minimum degree, natural, random) BatchLDL equals the reference.
* The cases exercise QDLDL's processing order: in some rows it is not the increasing
  column order (where a column-by-column sum would round differently).
"""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.batch.ldl import BatchLDL
from caspar_backend.batch.ldl_symbolic import plan_ldl
from caspar_backend.linsolve.qdldl import QDLDLSolver

from . import qdldl_reference as ref
from .ldl_support import arm_case, csc, kkt_case, mpc_case, qdldl_perm, reference_inertia

qdldl = pytest.importorskip("qdldl")

CASES = {
    "quasi_definite": lambda: kkt_case(30),
    "quasi_definite_dense_w": lambda: kkt_case(31, nx=9, m=6, w_density=0.9),
    "indefinite_slacks": lambda: kkt_case(32, n_slack=5, delta_c=0.0, convex=False),
    "indefinite_static_reg": lambda: kkt_case(33, n_slack=2, delta_c=0.0, convex=False,
                                              eps=1e-8),
    "larger_kkt": lambda: kkt_case(34, nx=40, m=15, n_slack=6, w_density=0.15,
                                   a_density=0.1, B=4),
    "mpc_64": lambda: mpc_case(35, T=6),
    "mpc_904": lambda: mpc_case(36, T=90, B=3),
}
SMALL = ["quasi_definite", "quasi_definite_dense_w", "indefinite_slacks",
         "indefinite_static_reg", "mpc_64", "arm"]


def _case(name):
    if name == "arm":
        pytest.importorskip("casadi")
        return arm_case(37)
    return CASES[name]()


# ====================================================================== bank problems
BANK_PROBLEMS = ("hs071", "chained_rosenbrock_100", "optimal_control_200",
                 "ring_inequalities", "needs_restoration_circle")


@pytest.fixture(scope="module")
def bank_kkt():
    """``{problem: [(structure, values (B, nnz)), ...]}``: every matrix the single CPU
    path's QDLDLSolver factorized during ``from_casadi(...).solve(...)``, grouped by
    pattern (the restoration phase has its own)."""
    pytest.importorskip("casadi")
    from tests.support.problem_bank import BANK
    from tests.support.solver_harness import run_caspar

    original = QDLDLSolver.factorize
    seen = []

    def recording(self, values):
        seen.append((self.structure, np.array(values, dtype=np.float64)))
        return original(self, values)

    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(QDLDLSolver, "factorize", recording)
        for p in BANK:
            if p.name not in BANK_PROBLEMS:
                continue
            seen.clear()
            # the general path's factorizations (the compiled path has its own QDLDL)
            run_caspar(dict(p.build(), options=dict(p.options or {}, compiled_path="no")),
                       public=True)
            groups = {}
            for s, v in seen:
                key = (s.n, s.indptr.tobytes(), s.indices.tobytes())
                groups.setdefault(key, (s, []))[1].append(v)
            out[p.name] = [(s, np.array(vs)) for s, vs in groups.values()]
    assert sorted(out) == sorted(BANK_PROBLEMS)
    return out


# ====================================================================== helpers
def _assert_equals_qdldl(s, values, seed=0):
    """BatchLDL in qdldl's permutation against qdldl and the single path, instance by
    instance (module doc).  Returns the number of instances qdldl factorized."""
    B = len(values)
    perm = qdldl_perm(s, values)
    f = BatchLDL(s, B, perm=perm, dense=False)
    pos, neg, zero = (a.copy() for a in f.factorize(values))
    x = np.random.default_rng(seed).standard_normal((B, s.n))
    sol, prod = f.solve(x), f.matvec(values, x)
    single = QDLDLSolver(small_pivoting=False)
    single.analyse(s)
    done = 0
    for b in range(B):
        fac = single.factorize(values[b])
        assert np.array_equal(prod[b], single.matvec(x[b]))
        if not fac.ok:              # qdldl stopped at a zero pivot: a failure here too
            assert zero[b] > 0
            continue
        assert (pos[b], neg[b], zero[b]) == fac.inertia
        L, d, P = qdldl.Solver(csc(s, values[b]), upper=True).factors()
        Lb, db, Pb = f.factors(b)
        assert np.array_equal(Pb, P)
        assert np.array_equal(Lb.indptr, L.indptr) and np.array_equal(Lb.indices, L.indices)
        assert np.array_equal(Lb.data, L.data)
        assert np.array_equal(db, d)
        assert np.array_equal(sol[b], single.solve(x[b]))
        done += 1
    return done


# ====================================================================== the reference
@pytest.mark.parametrize("name", SMALL)
def test_reference_is_qdldl_bit_for_bit(name):
    s, v = _case(name)
    perm = qdldl_perm(s, v)
    x = np.random.default_rng(1).standard_normal(s.n)
    for b in range(len(v)):
        q = qdldl.Solver(csc(s, v[b]), upper=True)
        L, d, _ = q.factors()
        r = ref.factor(s.indptr, s.indices, v[b], perm)
        assert r.failed_at == -1
        assert np.array_equal(r.lp, L.indptr) and np.array_equal(r.li, L.indices)
        assert np.array_equal(r.lx, L.data) and np.array_equal(r.d, d)
        assert np.array_equal(ref.solve(r, x), q.solve(x))


def test_reference_is_qdldl_on_bank_kkt(bank_kkt):
    s, v = bank_kkt["chained_rosenbrock_100"][0]
    perm = qdldl_perm(s, v)
    for b in range(0, len(v), 20):
        L, d, _ = qdldl.Solver(csc(s, v[b]), upper=True).factors()
        r = ref.factor(s.indptr, s.indices, v[b], perm)
        assert np.array_equal(r.lx, L.data) and np.array_equal(r.d, d)


# ====================================================================== QDLDL's order
@pytest.mark.parametrize("name", [*CASES, "arm"])
def test_batch_equals_qdldl_bit_for_bit(name):
    s, v = _case(name)
    assert _assert_equals_qdldl(s, v) == len(v)


@pytest.mark.parametrize("problem", BANK_PROBLEMS)
def test_batch_equals_qdldl_on_the_single_path_kkt(bank_kkt, problem):
    done = 0
    for s, v in bank_kkt[problem]:
        done += _assert_equals_qdldl(s, v)
    assert done > 0


# ====================================================================== other orders
@pytest.mark.parametrize("name", SMALL)
def test_other_orders_follow_qdldl_rules(name):
    s, v = _case(name)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((len(v), s.n))
    for perm in (None, np.arange(s.n), rng.permutation(s.n)):
        f = BatchLDL(s, len(v), perm=perm, dense=False)
        pos, neg, zero = f.factorize(v)
        sol = f.solve(x)
        for b in range(len(v)):
            r = ref.factor(s.indptr, s.indices, v[b], f.plan.perm)
            L, d, _ = f.factors(b)
            assert (pos[b], neg[b], zero[b]) == reference_inertia(r.d)
            if r.failed_at >= 0:    # no pivoting: an order may meet a zero pivot
                assert zero[b] > 0
                continue
            assert np.array_equal(L.indptr, r.lp) and np.array_equal(L.indices, r.li)
            assert np.array_equal(L.data, r.lx) and np.array_equal(d, r.d)
            assert np.array_equal(sol[b], ref.solve(r, x[b]))


# ====================================================================== the cases' reach
def test_cases_exercise_the_processing_order():
    # targets whose products come in an order that is not increasing in the column c:
    # there, summing column by column would round differently from QDLDL
    s, v = kkt_case(30)
    pl = plan_ldl(s, qdldl_perm(s, v))
    col_of_row = np.full(pl.n_f, -1, np.int64)      # op_t's row holds T_kc: column c
    col_of_row[pl.off_row] = np.repeat(np.arange(pl.n), np.diff(pl.lp))
    ptr = pl.op_ptr
    mixed = sum(bool(np.any(np.diff(col_of_row[pl.op_t[a:b]]) < 0))
                for a, b in zip(ptr[:-1], ptr[1:]))
    assert mixed > 0
