"""benchmarks/bench_estimation.py at a small N: both solvers reach the true parameters in
the same iterations, and the rows carry what the report shows."""

import pytest

pytest.importorskip("casadi")


def test_estimation_bench_small(tmp_path):
    from benchmarks import bench_estimation
    from benchmarks.report import MEASUREMENT_COLUMNS

    bench_estimation.main(["--N", "60", "--out", str(tmp_path)])
    import csv

    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [(r["shooting"], r["solver"]) for r in rows] == [
        ("multiple", "ipopt"), ("multiple", "caspar"), ("single", "ipopt"), ("single", "caspar")]
    for ipopt, caspar in (rows[:2], rows[2:]):
        assert ipopt["status"] == caspar["status"] == "Solve_Succeeded"
        assert ipopt["iterations"] == caspar["iterations"]
        assert float(caspar["param_error"]) < 1e-6
    keys = {k for _, k, _ in MEASUREMENT_COLUMNS["estimation"]}
    assert keys <= set(rows[0])
