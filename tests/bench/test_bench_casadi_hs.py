"""benchmarks/bench_casadi_hs.py on a folder of files in the collection's form (MX rows
assigned into ``MX.zeros``, a remark printed at import): HS071 written here the way
CasADi's test/python/hock_schittkowski writes it, and a problem whose objective is NaN at
the start.  The script solves each with IPOPT and caspar and reports the statuses."""

from __future__ import annotations

import json

import pytest

HS071 = '''
import casadi as cs
print("hs071: a remark the collection prints")

def hs071():
    x_opt = cs.DM([1, 4.743, 3.82115, 1.37941])
    f_opt = 17.0140173
    x = cs.MX.sym('x', 4)
    x0 = cs.DM.zeros(4, 1)
    lbx = -cs.inf*cs.DM.ones(4, 1)
    ubx = cs.inf*cs.DM.ones(4, 1)
    g = cs.MX.zeros(2, 1)
    lbg = -cs.inf*cs.DM.ones(2, 1)
    ubg = cs.inf*cs.DM.ones(2, 1)
    x0[:] = [1, 5, 5, 1]
    lbx[:] = 1
    ubx[:] = 5
    lbg[0] = 25
    g[0] = x[0]*x[1]*x[2]*x[3]
    lbg[1] = 40
    ubg[1] = 40
    g[1] = x[0]**2 + x[1]**2 + x[2]**2 + x[3]**2
    f = x[0]*x[3]*(x[0]+x[1]+x[2]) + x[2]
    return (x_opt, f_opt, x, f, g, lbg, ubg, lbx, ubx, x0)
'''

HS900 = '''
import casadi as cs

def hs900():
    x = cs.MX.sym('x', 1)
    g = cs.MX.zeros(0, 1)
    return (cs.DM(1), 0.0, x, cs.log(x[0] - 2) + x[0]**2, g, cs.DM.zeros(0, 1),
            cs.DM.zeros(0, 1), -cs.inf, cs.inf, cs.DM(1.0))
'''


def test_bench_casadi_hs_reports_both_solvers(tmp_path, capsys):
    pytest.importorskip("casadi")
    from benchmarks import bench_casadi_hs

    (tmp_path / "hs071.py").write_text(HS071)
    (tmp_path / "hs900.py").write_text(HS900)
    out = bench_casadi_hs.main([str(tmp_path), "--json", str(tmp_path / "r.json")])
    text = capsys.readouterr().out
    assert out["hs071"]["ipopt"][0] == out["hs071"]["caspar"][0] == "Solve_Succeeded"
    assert out["hs071"]["caspar"][2] == pytest.approx(17.0140173, rel=1e-7)
    assert out["hs071"]["ipopt"][1] == out["hs071"]["caspar"][1]
    # log(x - 2) at x0 = 1: both stop at the start, and the row says how
    assert out["hs900"]["ipopt"][0] == "Invalid_Number_Detected"
    assert out["hs900"]["caspar"][0] == "Invalid_Number_Detected"
    assert "| hs071 | Solve_Succeeded |" in text and "2 problems:" in text
    saved = json.loads((tmp_path / "r.json").read_text())
    assert {k: (v["ipopt"][:2], v["caspar"][:2]) for k, v in saved.items()} == {
        k: (v["ipopt"][:2], v["caspar"][:2]) for k, v in out.items()}
