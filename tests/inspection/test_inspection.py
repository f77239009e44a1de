"""Problem.summary / compilation_info / advice: counts against independent ones (the
evaluator's scipy matrices, the generated source), advice naming the component, and the
front ends' access."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import caspar_backend as cb
from caspar_backend.inspection import advice as advice_mod

ca = pytest.importorskip("casadi")


def _model(lbx1=-5.0, scale=1.0, n_dense=0):
    n = 3 + n_dense
    x = ca.SX.sym("x", n)
    p = ca.SX.sym("p", 2)
    f = (x[0] - p[0]) ** 2 + ca.log(x[1]) + x[2] ** 2
    g = [x[0] / x[2], ca.sqrt(x[1]) + scale * x[0], x[0] * x[1] - p[1]]
    if n_dense:
        g.append(ca.sum1(x[3:]))
    lbx = [-1.0, lbx1, 0.5] + [-1.0] * n_dense
    return cb.from_casadi({"x": x, "p": p, "f": f, "g": ca.vertcat(*g)}, lbx=lbx,
                          ubx=[1.0, 5.0, 1.0] + [1.0] * n_dense, lbg=-1.0, ubg=1.0,
                          p=[1.0, 2.0], x0=[0.5] * n)


def test_summary_counts_are_the_matrices():
    P = _model()
    s = P.summary()
    ev = P.evaluator("cpu")
    x = np.linspace(0.3, 0.7, P.n)
    J = sp.coo_matrix(ev.jac(x)).tocsr()
    H = sp.tril(sp.coo_matrix(ev.hess(x, np.ones(P.m)))).tocsr()
    J.sum_duplicates()
    H.sum_duplicates()
    # structural counts: explicit zeros at this x still count, so compare with the
    # pattern of the matrices the evaluator assembles
    assert s.jac_nnz == J.nnz and s.hess_nnz == H.nnz
    r, c = H.tocoo().row, H.tocoo().col
    on_diag = np.count_nonzero(r == c)
    assert s.kkt_nnz == H.nnz + (P.n - on_diag) + J.nnz + P.m
    assert (s.n, s.m, s.n_params) == (P.n, P.m, P.n_params)
    assert s.objective_instances == sum(g.size for g in P.objective_groups)
    assert s.constraint_templates == len(P.constraint_groups)
    assert s.device == "cpu" and "below" in s.device_reason
    text = str(s)
    assert "Jacobian nnz" in text and f"{s.kkt_nnz:,}" in text


def test_compilation_info_cpu():
    P = _model()
    info = P.compilation_info("cpu")
    assert len(info.templates) == len(P.groups)
    assert info.build_seconds > 0 and info.cache_hit is None and not info.kernels
    t = info.templates[0]
    g = P.objective_groups[0]
    assert (t.kind, t.instances, t.grad_entries, t.hess_entries) == \
        ("objective", g.size, len(g.grad), len(g.hess))
    # the problem's generated NumPy source is these templates' sources, one after another
    def code(text):
        return sum(1 for line in text.splitlines() if line.strip())

    assert sum(t.numpy_lines for t in info.templates) == code(P.numpy_source())
    assert sum(t.cuda_lines for t in info.templates) < code(P.cuda_source())
    assert "numpy lines" in str(info)


def test_advice_domain_names_variable_and_row():
    a = _model().advice()
    dom = [i for i in a if i.kind == "domain"]
    msgs = " | ".join(i.message for i in dom)
    assert "log of x_1 in the objective" in msgs
    assert "sqrt of x_1 in constraint g[1]" in msgs
    # x_2 has bounds [0.5, 1]: its division is safe
    assert "div" not in msgs
    # a bound keeping x_1 positive removes both
    assert not [i for i in _model(lbx1=1e-6).advice() if i.kind == "domain"]


def test_advice_dense_rows_and_scaling(monkeypatch):
    monkeypatch.setattr(advice_mod, "DENSE_ROW_MIN", 50)
    a = _model(scale=1e8, n_dense=60).advice([0.5] * 63)
    kinds = {i.kind for i in a}
    assert "dense_row" in kinds
    dense = next(i for i in a if i.kind == "dense_row")
    assert "g[3]" in dense.message and "60 nonzeros" in dense.message
    scale = [i.message for i in a if i.kind == "scaling"]
    assert any("constraint rows" in m and "g[1]" in m for m in scale)
    assert any("variable columns" in m and "x_0" in m for m in scale)


def test_advice_nonfinite_at_point():
    a = _model().advice([0.5, -1.0, 0.5])
    bad = [i for i in a if i.kind == "nonfinite"]
    assert any("objective" in i.message for i in bad)
    assert any("g[1]" in i.message for i in bad)


def test_front_ends_reach_it():
    from caspar_backend.casadi import nlpsol

    x = ca.SX.sym("x", 2)
    S = nlpsol("S", "caspar", {"x": x, "f": (x[0] - 1) ** 2 + ca.log(x[1]), "g": x[0] + x[1]},
               {"print_time": False, "caspar": {"print_level": 0}})
    assert S.problem.summary().n == 2
    assert any(i.kind == "domain" for i in S.problem.advice([0.5, 0.5]))
    pyo = pytest.importorskip("pyomo.environ")
    m = pyo.ConcreteModel()
    m.x = pyo.Var([0, 1], initialize=0.5)
    m.obj = pyo.Objective(expr=(m.x[0] - 1) ** 2 + pyo.log(m.x[1]))
    m.x[1].setlb(0.1)
    solver = pyo.SolverFactory("caspar")
    solver.solve(m)
    m.x[1].setlb(None)   # the compiled problem keeps the bound it was solved with
    assert solver.compiled_problem.summary().n == 2
    assert "log of x[1]" not in str(solver.compiled_problem.advice())
    assert solver.compiled_problem.compilation_info().templates


def test_profile_phases_add_up():
    P = _model(lbx1=1e-3)
    r = P.solve(print_level=0)
    prof = P.profile(r)
    assert [n for n, _ in prof.setup] == ["group + derive", "evaluator cpu"]
    assert prof.iterations == r.iterations and prof.counts == r.counts
    assert abs(sum(s for _, s in prof.solve) - r.timings["total"]) <= 1e-9 + 1e-6 * prof.total
    assert [n for n, _ in prof.solve][:2] == ["setup", "function_evaluations"]
    text = str(prof)
    assert "ms/it" in text and "evaluations: obj" in text


def test_readme_example_outputs_are_this_model():
    """README's "Inspecting a model" block is the output of the four calls on
    ``_model()``: the same lines, numbers aside where they are timings (compilation_info's
    build time, profile's seconds and shares), in order."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = text[text.index(">>> print(prob.summary())"):]
    block = block[:block.index("```")]
    P = _model()
    actual = {"summary": str(P.summary()), "compilation_info": str(P.compilation_info("cpu")),
              "advice": str(P.advice([0.5, 0.5, 0.5])),
              "profile": str(P.profile(P.solve(print_level=0)))}
    timed = {"compilation_info", "profile"}
    shown = {}
    for part in block.split(">>> print(prob.")[1:]:
        call, _, out = part.partition("\n")
        shown[call.split("(")[0]] = out.rstrip("\n").splitlines()
    assert set(shown) == set(actual)        # every call has its example output

    def mask(line):          # numbers and the padding that aligns them
        return " ".join(re.sub(r"\d+(\.\d+)?", "#", line).split())

    for call, lines in shown.items():
        got = actual[call].splitlines()
        if call in timed:
            lines, got = [mask(s) for s in lines], [mask(s) for s in got]
        assert lines == got, (call, lines, got)
