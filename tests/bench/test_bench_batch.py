"""``benchmarks/bench_batch.py`` at a tiny size, its comparison rule, a crash of CasADi's
threaded map recorded as a row, and the report's "Batched solves" section built from
its output."""

import csv
import math
import os
import signal

import numpy as np
import pytest

pytest.importorskip("casadi")

from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_batch import COLUMNS, ik_workload, parse, run  # noqa: E402


def test_compare_counts_and_relative_difference():
    ref = bm.Outcome(["Solve_Succeeded", "Solve_Succeeded", "Infeasible_Problem_Detected"],
                     np.array([10, 12, 30]), np.array([2.0, 4.0, 9.0]), 1.0)
    out = bm.Outcome(["Solve_Succeeded", "Solve_Succeeded", "Solve_Succeeded"],
                     np.array([10, 13, 30]), np.array([2.0, 4.002, 1.0]), 1.0)
    c = bm.compare(out, ref)
    # the third instance: not solved by both, so left out of df
    assert c == dict(status=2, iter=2, df=pytest.approx(5e-4))
    # objectives only (CasADi's map): no status or iteration counts
    nomap = bm.Outcome([""] * 3, np.full(3, -1), np.array([2.0, 4.0, np.nan]), 1.0)
    assert bm.compare(nomap, ref) == dict(status=None, iter=None, df=0.0)


def test_crashing_map_is_recorded(monkeypatch):
    monkeypatch.setattr(bm, "_map_in_child",
                        lambda *a: os.kill(os.getpid(), signal.SIGKILL))
    out = bm.casadi_map(ik_workload(3), 1e-8, 2, deadline=60)
    assert math.isnan(out.total_s) and np.all(np.isnan(out.f))
    assert out.extra["note"] == f"failed: child exited with code {-signal.SIGKILL}"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_service_split_runs_in_a_child_on_its_cores():
    """caspar_service_split: the service measured in a spawned child whose Python shares
    the first core (split_cores there; this process's threads stay as they were), the
    answers those of IPOPT."""
    first = min(os.sched_getaffinity(0))
    before = os.sched_getaffinity(0)
    out = bm.caspar_service_split(("benchmarks.bench_batch", "ik_workload", (12, 2)), 1e-8,
                                  3, 1024, 0.002, str(first))
    assert os.sched_getaffinity(0) == before
    assert f"Python on cores [{first}]" in out.extra["note"]
    assert out.solved == 12 and out.total_s > 0 and out.extra["p50_ms"] > 0
    ref = bm.ipopt_sequential(ik_workload(12, 2), 1e-8)
    assert bm.compare(out, ref)["status"] == 12 and bm.compare(out, ref)["df"] <= 1e-6


def test_tiny_run_and_report(tmp_path, capsys):
    out = tmp_path / "results" / "batch" / "cpu"
    a = parse(["--quick", "--ik", "4", "--vdp", "2", "--vdp-N", "10", "--scaling", "1,3",
               "--clients", "2", "--requests", "5", "--map-threads", "2",
               "--single-max", "0", "--out", str(out)])
    assert (a.quick, a.ik, a.clients, a.single_max) == (True, 4, 2, 0)
    rows = run(a)
    with open(out / "results.csv") as f:
        saved = list(csv.DictReader(f))
    assert list(saved[0]) == COLUMNS and len(saved) == len(rows)
    got = [(r["case"], r["solver"], r["device"], r["B"]) for r in rows]
    assert got == [("ik", "ipopt_seq", "cpu", 4), ("ik", "casadi_map", "cpu", 4),
                   ("ik", "caspar_batch", "cpu", 4), ("ik", "caspar_batch_again", "cpu", 4),
                   ("ik", "caspar_single", "cpu", 4),
                   ("vdp_colloc", "ipopt_seq", "cpu", 2),
                   ("vdp_colloc", "casadi_map", "cpu", 2),
                   ("vdp_colloc", "caspar_batch", "cpu", 2),
                   ("vdp_colloc", "caspar_batch_again", "cpu", 2),
                   ("vdp_colloc", "caspar_single", "cpu", 2),
                   ("ik_scaling", "caspar_batch", "cpu", 1),
                   ("ik_scaling", "caspar_batch", "cpu", 3),
                   ("ik_service", "caspar_service", "cpu", 5)]
    for r in rows:
        assert r["total_s"] > 0 and r["per_instance_ms"] > 0, r
        if r["solver"] != "casadi_map":
            assert r["solved"] == r["B"], r
    for r in rows:
        if r["solver"] in ("caspar_batch", "caspar_batch_again", "caspar_service") \
                and r["case"] != "ik_scaling":
            # solve_batch's contract: each instance is its single solve
            assert r["status_eq_single"] == r["iter_eq_single"] == r["n_single"] == r["B"]
            assert r["max_rel_df_single"] <= 1e-8
            # and these small problems agree with IPOPT, iteration for iteration
            assert r["status_eq_ipopt"] == r["B"] and r["max_rel_df_ipopt"] <= 1e-6
        if r["solver"] == "casadi_map":
            assert r["max_rel_df_ipopt"] <= 1e-12 and r["threads"] == 2
    svc = rows[-1]
    assert 0 < svc["p50_ms"] <= svc["p99_ms"] and 1 <= svc["mean_batch"] <= 2
    assert "[max_batch_size=1024" in capsys.readouterr().err

    from benchmarks.report import main as report

    md = tmp_path / "RESULTS.md"
    assert report(["--results", str(tmp_path / "results"), "--out", str(md)]) == 0
    text = md.read_text()
    for s in ("## Batched solves", "### batch: caspar on the CPU (quick run)",
              "#### Batch against sequential solves", "#### Scaling: IK",
              "#### SolverService", "| Van der Pol MPC (N=10) | caspar solve_batch | CPU | 2 |",
              "| Van der Pol MPC (N=10) | caspar solve_batch, second call | CPU | 2 |",
              "| IK | CasADi map (threads) of IPOPT | CPU | 4 | 2 |", "| CPU | 2 | 5 |"):
        assert s in text, s
    assert "profile_batch" not in text
