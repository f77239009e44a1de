"""The benchmark runner's IPOPT reference runs in a child process with a deadline:
building it (CasADi's nlpsol setup) has no time limit of its own."""

import math
import os
import sys
import time

import pytest

cs = pytest.importorskip("casadi")

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import benchmarks.measure as bench  # noqa: E402
from benchmarks.cases import Case  # noqa: E402

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs fork")


def _tiny():
    x = cs.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 1) ** 2 + (x[1] - 2) ** 2, "g": x[0] + x[1]}
    return nlp, dict(x0=[0, 0], lbx=[-10, -10], ubx=[10, 10], lbg=[-1e20], ubg=[2])


def test_reference_result_comes_back_from_the_child():
    nlp, args = _tiny()
    r = bench._ipopt_bounded(nlp, args, 1e-8, 100, 30.0)
    assert r.status == "Solve_Succeeded" and r.iterations > 0
    assert r.f == pytest.approx(0.5, rel=1e-7)          # x = (0.5, 1.5)
    assert list(r.x) == pytest.approx([0.5, 1.5], abs=1e-7)


def test_reference_that_hangs_is_cut_at_the_deadline(monkeypatch):
    def hang(*a, **k):
        time.sleep(60)

    monkeypatch.setattr(bench, "_ipopt", hang)
    nlp, args = _tiny()
    t = time.perf_counter()
    r = bench._ipopt_bounded(nlp, args, 1e-8, 100, 0.5)
    assert time.perf_counter() - t < 10
    assert r.status.startswith("Time limit") and math.isnan(r.f) and not r.success
    assert r.x.shape == (2,)


def test_reference_error_is_a_status(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("colouring failed")

    monkeypatch.setattr(bench, "_ipopt", boom)
    nlp, args = _tiny()
    r = bench._ipopt_bounded(nlp, args, 1e-8, 100, 5.0)
    assert r.status.startswith("ERROR RuntimeError: colouring failed") and math.isnan(r.f)


def test_runner_row_without_reference_is_not_a_mismatch(monkeypatch):
    """A case whose IPOPT reference hit the deadline: caspar's row has no match verdict
    (neither yes nor a mismatch) and the summary lists it as unreferenced."""
    def hang(*a, **k):
        time.sleep(60)

    monkeypatch.setattr(bench, "_ipopt", hang)
    nlp, args = _tiny()
    case = Case("ocp", "tiny", "n=2", lambda: ("casadi", nlp, args, {}))
    row = bench.run_case(case, ("cpu",), 1e-8, 100, 0.5)
    assert row["ipopt_status"].startswith("Time limit") and math.isnan(row["ipopt_f"])
    assert row["cpu_status"] == "Solve_Succeeded" and row["cpu_match"] == ""
    assert bench.match_word(row["cpu_match"]) == "no reference"
