"""benchmarks/bench_small_cold.py with one target per process: both solvers' processes
run and agree on the objective, and the rows carry what the report shows."""

import csv

import pytest

pytest.importorskip("casadi")


def test_small_cold_bench_one_target(tmp_path):
    from benchmarks import bench_small_cold
    from benchmarks.report import MEASUREMENT_COLUMNS

    bench_small_cold.main(["--k", "2", "--repeats", "1", "--out", str(tmp_path)])
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [(r["solver"], r["k"]) for r in rows] == [("caspar", "2"), ("ipopt", "2")]
    assert float(rows[0]["max_df"]) < 1e-10
    assert float(rows[1]["ratio"]) == 1.0
    for r in rows:
        parts = sum(float(r[c]) for c in ("imports_s", "build_s", "solves_s"))
        assert parts == pytest.approx(float(r["total_s"]), rel=1e-6)
    assert {k for _, k, _ in MEASUREMENT_COLUMNS["small_cold"]} <= set(rows[0])
