"""``python -m benchmarks report`` on a tiny synthetic results tree: one table per
device folder with its meta line, the regenerating command named, under 300 lines."""

import csv
import json

from benchmarks.report import COMMAND, main
from benchmarks.table import COLUMNS


def _row(suite, model, dev, t_ipopt, t_caspar, match=True, status="Solve_Succeeded"):
    r = {c: "" for c in COLUMNS}
    r.update(suite=suite, model=model, size="N=10", n=12, m=10, ipopt_status="Solve_Succeeded",
             ipopt_iter=9, ipopt_f=1.0, ipopt_build_s=0.5, ipopt_solve_s=t_ipopt)
    r.update({f"{dev}_status": status, f"{dev}_iter": 10, f"{dev}_f": 1.0,
              f"{dev}_build_s": 0.2, f"{dev}_solve_s": t_caspar, f"{dev}_match": match,
              f"{dev}_ratio": t_caspar / t_ipopt})
    return r


def _write(root, suite, device, rows, meta):
    d = root / suite / device
    d.mkdir(parents=True)
    with open(d / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    (d / "meta.json").write_text(json.dumps(meta))


def test_report_from_synthetic_csvs(tmp_path):
    res = tmp_path / "results"
    meta = dict(commit="abc1234", date="2026-12-01", hardware="test CPU, 2 cores", tol=1e-6,
                command="python -m benchmarks --suite cops")
    # IPOPT's "ok" at a local optimum above the published one, which caspar reaches
    local = dict(_row("cops", "robot", "cpu", 2.0, 1.0, match=False), published=0.9,
                 ipopt_matches_published=False, cpu_matches_published=True)
    _write(res, "cops", "cpu", [_row("cops", "chain", "cpu", 1.0, 0.5),
                                _row("cops", "elec", "cpu", 2.0, 4.0, match=False), local],
           meta)
    gpu_row = dict(_row("ocp", "vanderpol", "cuda", 3.0, 0.3), cuda_resolve_s=0.125,
                   cuda_analysis_s=0.0625)
    _write(res, "ocp", "gpu", [gpu_row], dict(meta, commit="def5678", hardware="test GPU"))
    (res / "raw" / "old_run").mkdir(parents=True)          # raw runs are not read
    out = tmp_path / "RESULTS.md"
    assert main(["--results", str(res), "--out", str(out)]) == 0
    text = out.read_text()
    assert text.count("\n") < 300
    assert f"`{COMMAND}`" in text.splitlines()[2]
    assert "## cops" in text and "## ocp" in text and text.index("## cops") < text.index("## ocp")
    assert "### cops: caspar CPU vs IPOPT" in text and "### ocp: caspar GPU vs IPOPT" in text
    assert "commit abc1234, 2026-12-01; test CPU, 2 cores; tol 1e-06" in text
    assert "commit def5678" in text
    assert "| chain | N=10 | 12 | 10 | ok | 9 | ok | 10 | yes |" in text
    assert "| elec |" in text and "**NO**" in text and "objective mismatches: elec;" in text
    assert "| yes (published; IPOPT's is a local optimum) |" in text
    assert "Solved: caspar CPU 2/3, IPOPT 3/3" in text
    # the GPU table's re-solve column (a compiled problem's second solve), the CPU's none
    assert "re-solve s |" in text and "| 0.125 |" in text
    assert text.count("re-solve s") == 1
    # and its one-time cuDSS analysis (inside the solve's time) before it
    assert "analysis s | re-solve s |" in text and "| 0.062 | 0.125 |" in text
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in text
    else:
        assert (res / "profile_cops.png").stat().st_size > 0
        assert "](results/profile_cops.png)" in text


def test_profile_ratios():
    from benchmarks.plot import profile_ratios

    inf = float("inf")
    r = profile_ratios({"ipopt": [1.0, 4.0, inf, inf], "cpu": [2.0, 2.0, 3.0, inf]})
    # the fourth problem nobody solved is left out; unsolved counts as ratio inf
    assert r == {"ipopt": [1.0, 2.0, inf], "cpu": [1.0, 1.0, 2.0]}


def test_meta_lines_state_the_gpu_initialisation():
    """A GPU run's one-time initialisation (the runner's device_init) is stated under
    the table's heading; a run without one has no such line."""
    from benchmarks.report import Run, meta_lines

    meta = dict(commit="abc", date="d", hardware="h", tol=1e-6, command="c")
    assert not any("initialised" in s for s in meta_lines(Run("acopf", "gpu", [], meta)))
    lines = meta_lines(Run("acopf", "gpu", [], dict(meta, device_init="6.00 s before ...")))
    assert "- GPU initialised before the first case: 6.00 s before ..." in lines
