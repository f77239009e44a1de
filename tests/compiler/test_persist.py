"""Problem.save / caspar_backend.load_problem: a loaded problem solves as the one saved,
bit for bit, in another process too; files of another build or damaged files are refused
with a ModelError naming the file."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import caspar_backend as cb
from caspar_backend import persist


def _rosenbrock_with_p():
    casadi = pytest.importorskip("casadi")
    x, p = casadi.SX.sym("x", 3), casadi.SX.sym("p", 1)
    f = (p[0] - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2 + (x[2] - x[1]) ** 2
    nlp = {"x": x, "p": p, "f": f, "g": x[0] ** 2 + x[1] ** 2 + x[2] ** 2}
    return cb.from_casadi(nlp, lbg=0.0, ubg=4.0, lbx=-2.0, ubx=2.0)


def _same(a, b):
    assert a.status == b.status and a.iterations == b.iterations
    np.testing.assert_array_equal(a.x, b.x)
    assert a.f == b.f


def test_round_trip_same_solve(tmp_path):
    problem = _rosenbrock_with_p()
    path = tmp_path / "rosen.caspar"
    problem.save(path)
    loaded = cb.load_problem(path)
    assert (loaded.n, loaded.m, loaded.n_params) == (problem.n, problem.m, problem.n_params)
    assert loaded.numpy_source() == problem.numpy_source()
    for p in (1.0, 1.7):
        _same(loaded.solve(x0=[0.5, 0.5, 0.5], p=[p]), problem.solve(x0=[0.5, 0.5, 0.5], p=[p]))
    head = persist.read_header(path)
    assert head["format"] == persist.FORMAT and head["n"] == 3 and head["m"] == 1


def test_another_process_loads_it(tmp_path):
    problem = _rosenbrock_with_p()
    path = tmp_path / "rosen.caspar"
    problem.save(path)
    ref = problem.solve(x0=[0.5, 0.5, 0.5], p=[1.3])
    code = ("import caspar_backend as cb, sys; r = cb.load_problem(sys.argv[1])"
            ".solve(x0=[0.5, 0.5, 0.5], p=[1.3], print_level=0); print(r.status, r.iterations, repr(r.f))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [ref.status, str(ref.iterations), repr(ref.f)]


def test_other_build_refused(tmp_path):
    path = tmp_path / "p.caspar"
    _rosenbrock_with_p().save(path)
    raw = path.read_bytes()
    head_end = raw.index(b"\n", len(persist.MAGIC))
    head = json.loads(raw[len(persist.MAGIC):head_end])
    head["build"] = "0" * 16
    path.write_bytes(persist.MAGIC + json.dumps(head).encode() + raw[head_end:])
    with pytest.raises(cb.ModelError, match="another build of caspar.*rebuild"):
        cb.load_problem(path)


def test_damaged_files_refused(tmp_path):
    good = tmp_path / "p.caspar"
    _rosenbrock_with_p().save(good)
    raw = good.read_bytes()
    cut = tmp_path / "cut.caspar"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(cb.ModelError, match="cut.caspar.*truncated or damaged"):
        cb.load_problem(cut)
    other = tmp_path / "other.bin"
    other.write_bytes(b"hello\n")
    with pytest.raises(cb.ModelError, match="other.bin is not a saved caspar problem"):
        cb.load_problem(other)


def test_save_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "p.caspar"
    problem = _rosenbrock_with_p()
    problem.save(path)
    before = path.read_bytes()

    def broken(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(persist.pickle, "dump", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        problem.save(path)
    assert path.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["p.caspar"]
