"""Compiled SX problems kept on disk (adapters/casadi/problem_cache.py): the same
program in a new process is loaded, not rebuilt, and evaluates as a fresh build; a
changed structure or constant is never served a stale entry; the call's p, x0, bounds
and symbol names are the ones used."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import from_casadi, problem_cache  # noqa: E402


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "1")
    monkeypatch.setattr(problem_cache, "MIN_INSTRUCTIONS", 100)
    return tmp_path / "problems"


def _model(N=200, c=100.0, name="x"):
    x = ca.SX.sym(name, N)
    p = ca.SX.sym("p", 2)
    f = ca.sumsqr(p[0] - x[:-1]) + c * ca.sumsqr(x[1:] - x[:-1] ** 2)
    g = x[1:] * x[:-1] + p[1] * ca.sin(x[1:])
    return {"x": x, "p": p, "f": f, "g": g}


def _values(prob, x, p):
    ev = prob.evaluator("cpu")
    lam = np.linspace(-1, 1, prob.m)
    return [np.atleast_1d(ev.obj(x, p=p)), ev.cons(x, p=p), ev.grad(x, p=p),
            ev.jac_values(x, p=p), ev.hess_values(x, lam, 0.5, p=p)]


def test_same_program_is_loaded_and_evaluates_as_a_fresh_build(cache):
    nlp = _model()
    first = from_casadi(nlp)
    assert first.model.meta["problem_cache"] == "stored"
    assert len(list(cache.glob("*.caspar"))) == 1
    again = from_casadi(_model())                     # rebuilt: new SX nodes, same program
    assert again.model.meta["problem_cache"] == "hit"
    x, p = np.linspace(-1, 1, 200), np.array([1.0, 0.3])
    for a, b in zip(_values(first, x, p), _values(again, x, p)):
        assert a.tobytes() == b.tobytes()


def test_changed_structure_or_constant_is_another_entry(cache):
    from_casadi(_model())
    assert from_casadi(_model(c=99.0)).model.meta["problem_cache"] == "stored"
    assert from_casadi(_model(N=201)).model.meta["problem_cache"] == "stored"
    assert from_casadi(_model(), bulk=False).model.meta["problem_cache"] == "stored"
    assert len(list(cache.glob("*.caspar"))) == 4
    # the changed constant is used, not the cached one
    x = np.linspace(-1, 1, 200)
    p = np.array([1.0, 0.3])
    f99 = from_casadi(_model(c=99.0)).evaluator("cpu").obj(x, p=p)
    nlp = _model(c=99.0)
    ref = float(ca.Function("f", [nlp["x"], nlp["p"]], [nlp["f"]])(x, p))
    assert f99 == pytest.approx(ref, rel=1e-14)


def test_call_values_and_names_are_this_calls(cache):
    from_casadi(_model(), p=[1.0, 0.0], lbx=-np.ones(200))
    prob = from_casadi(_model(name="y"), p=[2.0, 0.5], x0=np.full(200, 0.25), ubg=np.ones(199))
    assert prob.model.meta["problem_cache"] == "hit"
    np.testing.assert_array_equal(prob.p, [2.0, 0.5])
    np.testing.assert_array_equal(prob.x0, np.full(200, 0.25))
    np.testing.assert_array_equal(prob.lbx, np.full(200, -np.inf))
    np.testing.assert_array_equal(prob.ubg, np.ones(199))
    assert prob.var_names[3] == "y_3"
    r = prob.solve(print_level=0)
    nlp = _model(name="y")
    S = ca.nlpsol("S", "ipopt", nlp, {"ipopt.print_level": 0, "print_time": 0})
    ref = S(x0=np.full(200, 0.25), p=[2.0, 0.5], ubg=np.ones(199))
    assert r.f == pytest.approx(float(ref["f"]), rel=1e-7)


def test_a_new_process_loads_the_problem(cache, tmp_path):
    script = (
        "import sys; sys.path.insert(0, '.');"
        "from caspar_backend.adapters.casadi import from_casadi, problem_cache;"
        "problem_cache.MIN_INSTRUCTIONS = 100;"
        "from tests.adapters.test_problem_cache import _model;"
        "print(from_casadi(_model()).model.meta['problem_cache'])")
    out = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True).stdout.split()[-1] for _ in range(2)]
    assert out == ["stored", "hit"]


def test_off_switch_and_small_programs(cache, monkeypatch):
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "0")
    assert "problem_cache" not in from_casadi(_model()).model.meta
    assert "problem_cache" not in from_casadi(_model()).model.meta
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "1")
    monkeypatch.setattr(problem_cache, "MIN_INSTRUCTIONS", 10 ** 9)
    monkeypatch.setattr(problem_cache, "_memory", type(problem_cache._memory)())
    # small programs: kept in this process, not on disk
    assert from_casadi(_model()).model.meta["problem_cache"] == "stored"
    assert from_casadi(_model()).model.meta["problem_cache"] == "hit"
    assert not cache.exists() or not list(cache.glob("*.caspar"))


def test_a_small_program_built_again_is_a_twin(cache, monkeypatch):
    """A small program built again (a solver made per call): the kept problem's twin --
    the groups and the compiled path's layouts shared, values, names and caches its own,
    the same evaluations and solve as a fresh build; other names: another entry."""
    from caspar_backend.compiled.solve import layout_for

    monkeypatch.setattr(problem_cache, "MIN_INSTRUCTIONS", 10 ** 9)
    monkeypatch.setattr(problem_cache, "_memory", type(problem_cache._memory)())
    first = from_casadi(_model(N=20), p=[1.0, 0.3])
    again = from_casadi(_model(N=20), p=[2.0, 0.5], x0=np.full(20, 0.25))
    assert again.model.meta["problem_cache"] == "hit"
    assert again.constraint_groups is first.constraint_groups
    assert again.model is not first.model and again._evaluators is not first._evaluators
    np.testing.assert_array_equal(first.p, [1.0, 0.3])          # not the twin's
    np.testing.assert_array_equal(again.x0, np.full(20, 0.25))
    x, p = np.linspace(-1, 1, 20), np.array([1.0, 0.3])
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "0")
    fresh = from_casadi(_model(N=20))                            # (a fresh build)
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "1")
    for a, b in zip(_values(fresh, x, p), _values(again, x, p)):
        assert a.tobytes() == b.tobytes()
    bounds = (np.full(20, -5.0), np.full(20, 5.0), np.zeros(19), np.full(19, np.inf))
    assert again.structure_key is first.structure_key and \
        fresh.structure_key is not first.structure_key
    assert layout_for(again, *bounds) is layout_for(first, *bounds)
    # (a fresh build of a small model finds it too, by content: compiled.solve)
    assert layout_for(fresh, *bounds) is layout_for(first, *bounds)
    r, r_fresh = (q.solve(x0=np.full(20, 0.5), p=[1.0, 0.3], print_level=0,
                          lbg=bounds[2], ubg=bounds[3]) for q in (again, fresh))
    assert (r.status, r.iterations) == (r_fresh.status, r_fresh.iterations)
    assert r.f == r_fresh.f
    other = from_casadi(_model(N=20, name="y"))
    assert other.model.meta["problem_cache"] == "stored" and other.var_names[0] == "y_0"


def test_the_kept_small_problems_are_bounded(cache, monkeypatch):
    monkeypatch.setattr(problem_cache, "MIN_INSTRUCTIONS", 10 ** 9)
    monkeypatch.setattr(problem_cache, "MEMORY_ENTRIES", 2)
    monkeypatch.setattr(problem_cache, "_memory", type(problem_cache._memory)())
    for c in (1.0, 2.0, 3.0):
        from_casadi(_model(N=5, c=c))
    assert len(problem_cache._memory) == 2
    assert from_casadi(_model(N=5, c=1.0)).model.meta["problem_cache"] == "stored"
    assert from_casadi(_model(N=5, c=3.0)).model.meta["problem_cache"] == "hit"


def test_damaged_entry_is_rebuilt(cache):
    from_casadi(_model())
    (entry,) = cache.glob("*.caspar")
    entry.write_bytes(entry.read_bytes()[:200])
    assert from_casadi(_model()).model.meta["problem_cache"] == "stored"


def test_folder_is_trimmed_least_recently_used_first(cache, monkeypatch):
    monkeypatch.setattr(problem_cache, "MAX_ENTRIES", 2)
    for c in (1.0, 2.0, 3.0):
        from_casadi(_model(c=c))
    assert len(list(cache.glob("*.caspar"))) == 2
    assert from_casadi(_model(c=3.0)).model.meta["problem_cache"] == "hit"
    assert from_casadi(_model(c=1.0)).model.meta["problem_cache"] == "stored"
    monkeypatch.setattr(problem_cache, "MAX_BYTES", 1)          # only the newest stays
    from_casadi(_model(c=4.0))
    assert len(list(cache.glob("*.caspar"))) == 1
    assert from_casadi(_model(c=4.0)).model.meta["problem_cache"] == "hit"


def test_a_hit_touches_its_entry_once_an_hour(cache):
    """A hit moves its entry's modification time (the trim's recency) to now when it
    is older than TOUCH_AFTER, and leaves a recent one alone (the write costs a warm
    setup milliseconds)."""
    import os
    import time

    from_casadi(_model())
    (entry,) = cache.glob("*.caspar")
    old = time.time() - 2 * problem_cache.TOUCH_AFTER
    os.utime(entry, (old, old))
    assert from_casadi(_model()).model.meta["problem_cache"] == "hit"
    assert entry.stat().st_mtime > old + problem_cache.TOUCH_AFTER
    recent = time.time() - 60.0
    os.utime(entry, (recent, recent))
    assert from_casadi(_model()).model.meta["problem_cache"] == "hit"
    assert abs(entry.stat().st_mtime - recent) < 2.0     # (coarse file-system clocks)


def test_unwritable_cache_folder_only_turns_the_cache_off(cache, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(blocker))     # a file: no folder under it
    prob = from_casadi(_model())
    assert prob.model.meta["problem_cache"] == "not stored"
    assert prob.solve(print_level=0).status == "Solve_Succeeded"


def test_threads_building_one_program_at_once(cache):
    import threading

    out = []

    def build():
        out.append(from_casadi(_model()))

    threads = [threading.Thread(target=build) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4 and len(list(cache.glob("*.caspar"))) == 1
    assert not list(cache.glob(".*.tmp"))
    again = from_casadi(_model())
    assert again.model.meta["problem_cache"] == "hit"
    x, p = np.linspace(-1, 1, 200), np.array([1.0, 0.3])
    for prob in out:
        for a, b in zip(_values(prob, x, p), _values(again, x, p)):
            assert a.tobytes() == b.tobytes()


def test_storing_builds_no_symbol_names(cache, monkeypatch):
    # a name costs a SWIG call per symbol (seconds at 10^6): the entry stores none,
    # as a hit sets the call's own names
    from caspar_backend.adapters.casadi import names

    def refuse(self, i):
        raise AssertionError("a symbol name was built while storing")

    monkeypatch.setattr(names.SXNames, "_make", refuse)
    assert from_casadi(_model()).model.meta["problem_cache"] == "stored"
    monkeypatch.undo()
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(cache.parent))
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "1")
    monkeypatch.setattr(problem_cache, "MIN_INSTRUCTIONS", 100)
    hit = from_casadi(_model(name="y"))
    assert hit.model.meta["problem_cache"] == "hit"
    assert hit.model.var_names[3] == "y_3" and hit.model.con_names[2] == "g[2]"


def test_indexed_names_pickle_as_base_and_length():
    import pickle

    from caspar_backend.adapters.casadi.names import IndexedNames

    got = pickle.loads(pickle.dumps(IndexedNames("g", 10 ** 7)))
    assert isinstance(got, IndexedNames) and len(got) == 10 ** 7 and got[123] == "g[123]"
