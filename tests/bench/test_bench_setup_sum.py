"""benchmarks/bench_setup_sum.py at small sizes: one child per size, the single SX sum
read into two groups, and the rows written with what the report shows."""

import csv
import json
import math

import pytest

pytest.importorskip("casadi")


def test_setup_sum_bench_small(tmp_path):
    from benchmarks import bench_setup_sum
    from benchmarks.report import MEASUREMENT_COLUMNS

    bench_setup_sum.main(["--sizes", "300", "3000", "--solve", "--out", str(tmp_path)])
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [int(r["N"]) for r in rows] == [300, 3000]
    for r in rows:
        assert int(r["groups"]) == 2 and r["problem_cache"] == "off"
        assert 0 < float(r["read"]) <= float(r["setup"])
        # (nan where an earlier child of this process peaked higher: ru_maxrss of
        # children is their maximum so far)
        assert math.isnan(float(r["rss_mb"])) or float(r["rss_mb"]) > 0
    assert {k for _, k, _ in MEASUREMENT_COLUMNS["sum_setup"]} <= set(rows[0])
    meta = json.load(open(tmp_path / "meta.json"))
    assert meta["command"].startswith("python benchmarks/bench_setup_sum.py --sizes 300")
