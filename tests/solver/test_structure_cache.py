"""Re-solves of a compiled problem reuse its structures and give the first solve's answers.

A solve keeps the structures that depend only on the problem's sparsity, its fixed
variables, equality rows, finite bounds and structural options in the evaluator's
:class:`~caspar_backend.structure_cache.StructureCache`; qdldl's symbolic analysis is
shared too, through idle factorization objects that a later solve refactorizes
(``qdldl.Solver.update``).  Checked here: a re-solve on a warm evaluator equals the solve
of a fresh evaluator bit for bit (status, iterations, repr of f, x and multipliers), also
through the restoration phase, with fixed variables, L-BFGS and the condensed system,
and after the structure changed; solves leave the cached structures unchanged;
``update`` gives a new object's factors bit for bit, and fails on a zero pivot as the
constructor does; the cache's bound and its concurrent insertions.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.solver import solve_nlp
from caspar_backend.structure_cache import StructureCache
from tests.support.problem_bank import bank
from tests.support.solver_harness import make_evaluator

pytest.importorskip("qdldl")

PROBLEMS = {p.name: p for p in bank()}
#: equalities and inequalities, fixed variables, restoration phases (one ending in local
#: infeasibility)
NAMES = ["hs071", "fixed_variables", "needs_restoration_circle", "needs_restoration_exp",
         "restoration_to_local_infeasibility_wb"]
OPTIONS = [{}, {"kkt_system": "condensed"}, {"hessian_approximation": "limited-memory"}]


def _data(name):
    p = PROBLEMS[name]
    return dict(p.build(), options=p.options)


def _solve(ev, d, opts, **changes):
    args = {k: np.array(d[k], float) for k in ("lbx", "ubx", "lbg", "ubg", "x0")}
    args.update(changes)
    o = {"print_level": 0, **dict(d["options"]), **opts}
    return solve_nlp(ev, args["lbx"], args["ubx"], args["lbg"], args["ubg"], args["x0"],
                     options=o)


def _answer(r):
    return (r.status, r.iterations, repr(r.f), r.x.tobytes(), r.lam_g.tobytes(),
            r.lam_x.tobytes())


@pytest.mark.parametrize("opts", OPTIONS, ids=["augmented", "condensed", "lbfgs"])
@pytest.mark.parametrize("name", NAMES)
def test_resolve_equals_a_fresh_solve(name, opts):
    d = _data(name)
    fresh = _solve(make_evaluator(d), d, opts)
    ev = make_evaluator(d)
    # warm-ups from other starting points leave their values in every cached object
    x0 = np.array(d["x0"], float)
    for start in (1.1 * x0 + 0.2, 0.5 * x0 - 0.3):
        _solve(ev, d, opts, x0=start)
    misses = ev.structure_cache.misses
    again = _solve(ev, d, opts)
    assert ev.structure_cache.misses == misses and ev.structure_cache.hits > 0
    assert _answer(again) == _answer(fresh)


def test_a_changed_structure_is_a_new_entry():
    """Fixing a variable, turning an inequality into an equality, removing a bound:
    each solve on the warm evaluator equals the fresh evaluator's solve of that data."""
    d = _data("hs071")
    ev = make_evaluator(d)
    _solve(ev, d, {})
    lbx, ubx = np.array(d["lbx"], float), np.array(d["ubx"], float)
    lbg, ubg = np.array(d["lbg"], float), np.array(d["ubg"], float)
    fixed_lb, fixed_ub = lbx.copy(), ubx.copy()
    fixed_lb[2] = fixed_ub[2] = 3.0
    eq_ub = ubg.copy()
    eq_ub[0] = lbg[0]                        # the inequality g_0 >= 25 as g_0 = 25
    free_ub = ubx.copy()
    free_ub[3] = np.inf
    for changes in (dict(lbx=fixed_lb, ubx=fixed_ub), dict(ubg=eq_ub), dict(ubx=free_ub)):
        misses = ev.structure_cache.misses
        got = _solve(ev, d, {}, **changes)
        assert ev.structure_cache.misses > misses
        assert _answer(got) == _answer(_solve(make_evaluator(d), d, {}, **changes))
        assert _answer(_solve(ev, d, {}, **changes)) == _answer(got)


def test_bound_evaluators_share_the_cache():
    """The evaluators of Problem.evaluator(p=...) (one per solve) share one cache."""
    from caspar_backend import from_casadi
    from tests.support.solver_harness import _nlp

    pr = from_casadi(_nlp(_data("hs071")))
    a, b = pr.evaluator("cpu", p=[]), pr.evaluator("cpu", p=[])
    assert a is not b and a.structure_cache is b.structure_cache is not None


def _arrays(obj, seen=None):
    """Every NumPy array reachable from ``obj`` through attributes, lists and tuples."""
    seen = set() if seen is None else seen
    if id(obj) in seen or obj is None or isinstance(obj, (int, float, str, bytes, bool)):
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [a for o in obj for a in _arrays(o, seen)]
    if hasattr(obj, "__dict__") or hasattr(obj, "__dataclass_fields__"):
        return [a for o in vars(obj).values() for a in _arrays(o, seen)]
    return []


@pytest.mark.parametrize("opts", OPTIONS[:2], ids=["augmented", "condensed"])
def test_solves_leave_the_cached_structures_unchanged(opts):
    """Nothing writes to a cached structure (the cache's rule; its arrays are not
    flagged read-only, see caspar_backend.structure_cache): every array reachable from
    the entries keeps its bytes through re-solves from other points, restoration phases
    included."""
    d = _data("needs_restoration_exp")
    ev = make_evaluator(d)
    _solve(ev, d, opts)
    arrays = [a for entry in ev.structure_cache._entries.values() for a in _arrays(entry)]
    assert len(arrays) > 40
    before = [a.tobytes() for a in arrays]
    x0 = np.array(d["x0"], float)
    for start in (x0, 1.1 * x0 + 0.2, 0.5 * x0 - 0.3):
        assert _solve(ev, d, opts, x0=start).iterations > 0
    assert [a.tobytes() for a in arrays] == before


def test_concurrent_solves_with_several_structures():
    """Threads solving one compiled problem at once (each through an evaluator of its
    own, ``Evaluator.bound``, all with one cache), with two structures (a variable fixed
    or not), two starting points and restoration phases: each answer equals that data's
    solve on a fresh evaluator."""
    from tests.solver.test_concurrency import _concurrently

    d = _data("needs_restoration_exp")
    x0 = np.array(d["x0"], float)
    fixed_lb, fixed_ub = np.array(d["lbx"], float), np.array(d["ubx"], float)
    fixed_lb[2] = fixed_ub[2] = 5.0
    cases = {}
    for k, start in enumerate((x0, x0 + 0.5)):
        cases[f"free{k}"] = dict(x0=start)
        cases[f"fixed{k}"] = dict(x0=start, lbx=fixed_lb, ubx=fixed_ub)
    want = {c: _answer(_solve(make_evaluator(d), d, {}, **kw)) for c, kw in cases.items()}
    ev = make_evaluator(d)
    # an evaluator of its own per solve (evaluation buffers), one cache for all
    for _ in range(5):
        got = _concurrently(lambda c: _answer(_solve(ev.bound(ev.parameters()), d, {},
                                                     **cases[c])), list(cases))
        assert got == want
    assert ev.structure_cache.hits > 0


# ------------------------------------------------------------------ qdldl reuse
def _pattern_matrices(rng, n=40, density=0.15, k=3):
    """``k`` quasi-definite upper-triangle CSC matrices with one pattern (every
    diagonal present), the values drawn anew each time."""
    a = sp.random(n, n, density, random_state=1, format="csc")
    up = sp.triu(a + a.T + sp.eye(n), format="csc")
    up.sort_indices()
    out = []
    for _ in range(k):
        m = up.copy()
        m.data = rng.standard_normal(m.nnz)
        diag = m.indptr[1:] - 1
        m.data[diag] = np.where(np.arange(n) < n // 2, 1.0, -1.0) * (n + rng.random(n))
        out.append(m)
    return out


def test_qdldl_update_gives_a_new_solvers_factors():
    import qdldl

    rng = np.random.default_rng(0)
    m1, m2, m3 = _pattern_matrices(rng)
    s = qdldl.Solver(m1, upper=True)
    for m in (m2, m3, m1):
        s.update(m, upper=True)
        new = qdldl.Solver(m, upper=True)
        (L, D, P), (Ln, Dn, Pn) = s.factors(), new.factors()
        assert L.data.tobytes() == Ln.data.tobytes()
        assert np.array_equal(L.indices, Ln.indices) and np.array_equal(L.indptr, Ln.indptr)
        assert D.tobytes() == Dn.tobytes() and np.array_equal(P, Pn)
        b = rng.standard_normal(m.shape[0])
        assert s.solve(b).tobytes() == new.solve(b).tobytes()


def _structure(m):
    from caspar_backend.linsolve.base import SparseStructure

    return SparseStructure(m.shape[0], m.indptr.astype(np.int64), m.indices.astype(np.int64))


def test_solvers_sharing_a_symbolic_analysis_equal_a_private_one():
    """QDLDLSolver with a shared QDLDLSymbolic: the second solver borrows the first's
    factorization object (no new one is made) and its inertia, solves and products equal
    those of a solver with its own analysis, bit for bit."""
    from caspar_backend.linsolve.qdldl import QDLDLSolver

    rng = np.random.default_rng(1)
    m1, m2, _ = _pattern_matrices(rng)
    st = _structure(m1)
    first, second, own = (QDLDLSolver(small_pivoting=False) for _ in range(3))
    sym = first.symbolic(st)
    first.analyse(st, sym)
    assert first.factorize(m1.data).ok
    borrowed = first._solver
    first.release()
    second.analyse(st, sym)
    own.analyse(st)
    b = rng.standard_normal(st.n)
    for m in (m1, m2):
        fs, fo = second.factorize(m.data), own.factorize(m.data)
        assert fs == fo and fs.ok
        assert second.solve(b).tobytes() == own.solve(b).tobytes()
        assert second.matvec(b).tobytes() == own.matvec(b).tobytes()
    assert second._solver is borrowed
    # each solver's matrix holds its own values over the shared index arrays
    assert first._matrix.data.tobytes() == m1.data.tobytes()
    assert np.shares_memory(second._matrix.indices, first._matrix.indices)
    second.release()
    assert sym.take() is borrowed and sym.take() is None


def test_a_borrowed_object_fails_on_a_zero_pivot_as_a_new_one():
    """A zero pivot in a solver's first factorization: the constructor raises, and a
    borrowed object (whose update leaves stale entries in D after the pivot) reports
    the same failure; the following factorization of a good matrix equals a fresh one."""
    from caspar_backend.linsolve.qdldl import QDLDLSolver

    rng = np.random.default_rng(2)
    good, other, _ = _pattern_matrices(rng)
    bad = good.copy()
    bad.data = good.data.copy()
    bad.data[bad.indices == 0] = 0.0          # row and column 0 zero: a zero pivot
    st = _structure(good)
    # (QDLDL itself: this pattern is small enough for the dense Bunch-Kaufman else)
    lender = QDLDLSolver(small_pivoting=False)
    sym = lender.symbolic(st)
    lender.analyse(st, sym)
    assert lender.factorize(other.data).ok
    lender.release()
    borrower, own = QDLDLSolver(small_pivoting=False), QDLDLSolver(small_pivoting=False)
    borrower.analyse(st, sym)
    own.analyse(st)
    fb, fo = borrower.factorize(bad.data), own.factorize(bad.data)
    assert fb == fo and not fb.ok and fb.inertia == (0, 0, st.n)
    fb, fo = borrower.factorize(good.data), own.factorize(good.data)
    assert fb == fo and fb.ok
    b = rng.standard_normal(st.n)
    assert borrower.solve(b).tobytes() == own.solve(b).tobytes()


# ------------------------------------------------------------------ the cache itself
def test_cache_drops_the_least_recently_used():
    c = StructureCache(max_entries=2)
    assert c.get("a", lambda: 1) == 1 and c.get("b", lambda: 2) == 2
    assert c.get("a", lambda: -1) == 1            # a hit: "a" is now the newest
    c.get("c", lambda: 3)
    assert len(c) == 2 and c.get("b", lambda: 4) == 4   # "b" was dropped, rebuilt
    assert (c.hits, c.misses) == (1, 4)


def _gets_from_threads(c, build, n=8):
    """``c.get('k', build)`` from ``n`` threads started together: their values."""
    barrier = threading.Barrier(n)
    got = []

    def run():
        barrier.wait()
        got.append(c.get("k", build))

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return got


def test_concurrent_misses_insert_one_value():
    c = StructureCache()
    got = _gets_from_threads(c, object)
    assert len(got) == 8 and all(g is got[0] for g in got)
    assert c.get("k", object) is got[0] and len(c) == 1


def test_a_key_being_built_is_waited_for_and_built_once():
    c = StructureCache()
    calls = []

    def build():
        calls.append(1)
        time.sleep(0.2)             # the other threads miss while it runs
        return object()

    got = _gets_from_threads(c, build)
    assert len(calls) == 1 and len(got) == 8 and all(g is got[0] for g in got)
    assert (c.misses, c.hits) == (1, 7)


def test_a_failed_build_wakes_its_waiters_and_the_next_builds():
    c = StructureCache()
    started = threading.Event()
    calls, out = [], {}

    def build():
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            started.set()
            time.sleep(0.2)
            raise RuntimeError("first build fails")
        return "value"

    def run(name):
        try:
            out[name] = c.get("k", build)
        except RuntimeError as e:
            out[name] = e

    first = threading.Thread(target=run, args=("first",), name="first")
    first.start()
    started.wait(10)
    others = [threading.Thread(target=run, args=(f"t{i}",), name=f"t{i}") for i in range(3)]
    for t in others:
        t.start()
    for t in [first, *others]:
        t.join(30)
    assert isinstance(out["first"], RuntimeError)
    assert [out[f"t{i}"] for i in range(3)] == ["value"] * 3
    assert len(calls) == 2 and c.get("k", build) == "value"


def test_builds_needing_each_others_keys_do_not_wait_on_each_other():
    c = StructureCache()
    barrier = threading.Barrier(2)
    out = {}

    def build(other):
        def inner():
            barrier.wait(10)            # both builds are running
            return ("outer", c.get(other, lambda: ("inner", other)))
        return inner

    def run(key, other):
        out[key] = c.get(key, build(other))

    a = threading.Thread(target=run, args=("a", "b"))
    b = threading.Thread(target=run, args=("b", "a"))
    a.start(), b.start()
    a.join(10), b.join(10)
    assert not a.is_alive() and not b.is_alive()        # no deadlock
    # each key holds one value, the first inserted (an outer build's or the other
    # thread's inner one), and each caller got that value
    assert out == {"a": c.get("a", None), "b": c.get("b", None)}


def test_concurrent_first_solves_build_each_structure_once(monkeypatch):
    """Four threads start their first solves of one compiled problem at once (evaluators
    bound from it, one cache; each build slowed so that they overlap): each structure
    is built once -- as many builds as one solve alone makes -- and every answer is the
    sequential solve's."""
    from caspar_backend import from_casadi
    from tests.support.solver_harness import _nlp

    d = _data("needs_restoration_circle")
    alone = make_evaluator(d)
    reference = _solve(alone, d, {})
    builds_alone = alone.structure_cache.misses
    pr = from_casadi(_nlp(d))
    evs = [pr.evaluator("cpu", p=[]) for _ in range(4)]
    cache = evs[0].structure_cache
    get = cache.get

    def slow_get(key, build):
        def slow():
            time.sleep(0.02)
            return build()
        return get(key, slow)

    monkeypatch.setattr(cache, "get", slow_get)
    barrier = threading.Barrier(4)
    out = [None] * 4

    def run(i):
        barrier.wait(10)
        out[i] = _solve(evs[i], d, {})

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(r is not None for r in out)
    assert cache.misses == builds_alone
    assert all(_answer(r) == _answer(reference) for r in out)
