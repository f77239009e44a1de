"""benchmarks/bench_launch on the host: every way of issuing work is timed, and the
fused ops it times are the solver's (their NumPy references change y as axpy does)."""

from __future__ import annotations

from benchmarks import bench_launch


def test_host_run_reports_every_operation(capsys):
    out = bench_launch.main(["--device", "cpu", "--n", "64", "--calls", "20"])
    for name in ("fused_axpy", "fused_reduction", "cupy_inplace", "cupy_empty"):
        assert out[name]["host_us"] > 0 and out[name]["device_us"] >= out[name]["host_us"]
    assert "graph_replay" not in out
    assert capsys.readouterr().out.startswith("LAUNCH {")
