"""caspar as an AMPL solver: the NL reader against Pyomo's own evaluation of the model it
wrote, and the ``caspar`` executable through Pyomo's ASL interface against the in-process
solver and IPOPT (the casadi wheel's, on Pyomo's NL file)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

from caspar_backend.ampl.driver import main as ampl_main, parse_options  # noqa: E402
from caspar_backend.ampl.nl_reader import read_nl  # noqa: E402
from caspar_backend.errors import ModelError, OptionError  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402


def _rich_model():
    """Every operator Pyomo's NL writer emits: n-ary sums, products, division, powers
    (constant and variable exponents), the unary functions, abs, if-then-else, a named
    Expression used twice (a defined variable), linear-only, ranged and equality rows,
    constants moved into the sides, a maximized objective with a constant."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(5), bounds=(0.2, 0.8), initialize=lambda m, i: 0.3 + 0.1 * i)
    m.y = pyo.Var(bounds=(1.5, 3.0), initialize=2.0)
    m.z = pyo.Var(initialize=0.5)
    x, y = m.x, m.y
    m.e = pyo.Expression(expr=pyo.exp(x[0]) * x[1] + y ** 2)
    m.c_lin = pyo.Constraint(expr=2 * x[0] - 3 * x[1] + x[2] + 4 <= 7)
    m.c_rng = pyo.Constraint(expr=pyo.inequality(-1, x[3] * y - pyo.log(y) + 1, 5))
    m.c_eq = pyo.Constraint(expr=m.e + pyo.sin(x[2]) - pyo.cos(x[3]) == 3.5)
    m.c_fun = pyo.Constraint(expr=pyo.tan(x[0]) + pyo.sqrt(y) + pyo.asin(x[1])
                             + pyo.acos(x[2]) + pyo.atan(x[3]) + pyo.sinh(x[4])
                             + pyo.cosh(x[0]) + pyo.tanh(x[1]) + pyo.asinh(x[2])
                             + pyo.acosh(y) + pyo.atanh(x[3]) + pyo.log10(y) >= -10)
    m.c_pow = pyo.Constraint(expr=x[0] ** x[1] + y ** 2.5 + 2 ** x[4] - x[2] / y
                             + abs(x[3] - 0.5) + m.z ** 3 <= 20)
    m.c_if = pyo.Constraint(expr=pyo.Expr_if(IF=x[4] >= 0.5, THEN=x[4] ** 2, ELSE=-x[4])
                            + m.e <= 12)
    m.o = pyo.Objective(expr=m.e - 2 * x[3] + m.z * x[2] + 7.0, sense=pyo.maximize)
    return m


def _write(m, path, symbolic):
    m.write(path, io_options={"symbolic_solver_labels": symbolic})


@pytest.mark.parametrize("symbolic", [False, True])
def test_reader_matches_pyomo_evaluation(tmp_path, symbolic):
    """At random points the NL model's objective equals Pyomo's value of the objective
    (negated: caspar minimizes -F) and every row's distance to its sides equals Pyomo's
    (Pyomo moves a body's constants into the sides)."""
    m = _rich_model()
    stub = str(tmp_path / "rich")
    _write(m, stub + ".nl", symbolic)
    # the NL file's variable and row order, from the writer's own symbol files
    _write(m, str(tmp_path / "names.nl"), True)
    cols = open(tmp_path / "names.col").read().split("\n")
    rows = open(tmp_path / "names.row").read().split("\n")
    nl = read_nl(stub + ".nl")
    assert (nl.n_var, nl.n_con, nl.sense) == (7, 6, -1)
    if symbolic:
        assert nl.model.var_names == cols[:7] and nl.model.con_names == rows[:6]
    by_name = {v.name: v for v in m.component_data_objects(pyo.Var)}
    start = np.array([by_name[c].value for c in cols[:7]])
    cons = {c.name: c for c in m.component_data_objects(pyo.Constraint)}
    ev = Problem(nl.model).evaluator("cpu")
    rng = np.random.default_rng(1)
    for _ in range(5):
        xv = np.array([rng.uniform(by_name[c].lb if by_name[c].lb is not None else 0.0,
                                   by_name[c].ub if by_name[c].ub is not None else 1.0)
                       for c in cols[:7]])
        for c, v in zip(cols[:7], xv):
            by_name[c].set_value(float(v))
        assert ev.obj(xv) == pytest.approx(-pyo.value(m.o), rel=1e-13, abs=1e-13)
        g = ev.cons(xv)
        for i, r in enumerate(rows[:6]):
            c, body = cons[r], pyo.value(cons[r].body)
            if c.has_lb():
                assert g[i] - nl.model.lbg[i] == pytest.approx(body - pyo.value(c.lower),
                                                               rel=1e-12, abs=1e-12)
            if c.has_ub():
                assert nl.model.ubg[i] - g[i] == pytest.approx(pyo.value(c.upper) - body,
                                                               rel=1e-12, abs=1e-12)
    # the start and the bounds as the model says
    np.testing.assert_array_equal(nl.model.x0, start)
    assert nl.model.lbx[cols.index("y")] == 1.5 and nl.model.ubx[cols.index("z")] == np.inf


def _hs071(sense=pyo.minimize):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), bounds=(1, 5), initialize={0: 1, 1: 5, 2: 5, 3: 1})
    f = m.x[0] * m.x[3] * (m.x[0] + m.x[1] + m.x[2]) + m.x[2]
    m.o = pyo.Objective(expr=f if sense == pyo.minimize else -f, sense=sense)
    m.c1 = pyo.Constraint(expr=m.x[0] * m.x[1] * m.x[2] * m.x[3] >= 25)
    m.c2 = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in range(4)) == 40)
    m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.ipopt_zL_out = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    m.ipopt_zU_out = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    return m


def _executable():
    exe = shutil.which("caspar")
    assert exe is not None, "the 'caspar' console script is not on the PATH"
    return exe


@pytest.mark.parametrize("sense", [pyo.minimize, pyo.maximize])
def test_executable_through_pyomo_equals_in_process_and_ipopt(sense):
    """SolverFactory('asl:caspar') runs ``caspar stub.nl -AMPL``: the same optimum,
    duals and IPOPT bound-multiplier suffixes as the in-process SolverFactory('caspar'),
    and IPOPT's objective."""
    import caspar_backend  # noqa: F401  (registers the in-process 'caspar')
    from tests.support.pyomo_ipopt_reference import solve_reference

    ref = solve_reference(_hs071(sense))
    a, b = _hs071(sense), _hs071(sense)
    ra = pyo.SolverFactory("asl:caspar", executable=_executable()).solve(a)
    rb = pyo.SolverFactory("caspar").solve(b)
    assert ra.solver.termination_condition == pyo.TerminationCondition.optimal
    assert rb.solver.termination_condition == pyo.TerminationCondition.optimal
    assert "Optimal Solution Found" in str(ra.solver.message)
    assert pyo.value(a.o) == pytest.approx(ref.objective, rel=1e-9)
    for i in range(4):
        assert pyo.value(a.x[i]) == pytest.approx(pyo.value(b.x[i]), rel=1e-8, abs=1e-9)
    for c in (a.c1, a.c2):
        cb = b.find_component(c.name)
        assert a.dual[c] == pytest.approx(b.dual[cb], rel=1e-7, abs=1e-9)
    for suf in ("ipopt_zL_out", "ipopt_zU_out"):
        sa, sb = a.component(suf), b.component(suf)
        for i in range(4):
            assert sa.get(a.x[i], 0.0) == pytest.approx(sb.get(b.x[i], 0.0), abs=1e-7)


def test_plain_name_without_importing_caspar(tmp_path):
    """A script that never imports caspar_backend: Pyomo finds no plugin named 'caspar'
    and runs the executable as an AMPL solver -- and gets IPOPT's optimum."""
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent("""
        import pyomo.environ as pyo
        m = pyo.ConcreteModel()
        m.x = pyo.Var(initialize=-1.2)
        m.y = pyo.Var(initialize=1.0)
        m.o = pyo.Objective(expr=(1 - m.x) ** 2 + 100 * (m.y - m.x ** 2) ** 2)
        r = pyo.SolverFactory("caspar").solve(m, options={"tol": 1e-10})
        assert "caspar_backend" not in __import__("sys").modules
        print(r.solver.termination_condition, pyo.value(m.x), pyo.value(m.y))
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, PATH=os.path.dirname(
                             _executable()) + os.pathsep + os.environ.get("PATH", "")))
    assert out.returncode == 0, out.stderr
    cond, xv, yv = out.stdout.split()[-3:]
    assert cond == "optimal"
    assert float(xv) == pytest.approx(1.0, abs=1e-8) and float(yv) == pytest.approx(1.0,
                                                                                      abs=1e-8)


def test_infeasible_problem_reports_infeasible(tmp_path):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, 1))
    m.c = pyo.Constraint(expr=m.x ** 2 >= 4)
    m.o = pyo.Objective(expr=m.x)
    r = pyo.SolverFactory("asl:caspar", executable=_executable()).solve(m)
    assert r.solver.termination_condition == pyo.TerminationCondition.infeasible


def test_options_from_the_command_line_and_the_environment(tmp_path, monkeypatch, capsys):
    """``key=value`` and ``key value`` words, AMPL's ``outlev`` / ``maxit``; an unknown
    option is an error naming it and writes no .sol file."""
    assert parse_options(["tol=1e-9", "outlev", "0", "maxit=3", "mu_strategy=adaptive"]) \
        == {"tol": 1e-9, "print_level": 0, "max_iter": 3, "mu_strategy": "adaptive"}
    stub = str(tmp_path / "h")
    _hs071().write(stub + ".nl")
    monkeypatch.setenv("caspar_options", "max_iter=2 print_level=0")
    assert ampl_main([stub, "-AMPL"]) == 0
    sol = open(stub + ".sol").read()
    assert "Maximum Number of Iterations Exceeded" in sol and "objno 0 400" in sol
    os.remove(stub + ".sol")
    assert ampl_main([stub + ".nl", "-AMPL", "max_iterz=5"]) == 1
    assert "max_iterz" in capsys.readouterr().err
    assert not os.path.exists(stub + ".sol")
    with pytest.raises(OptionError):
        parse_options(["tol"])


def _nl(tmp_path, body: str, header_discrete="0 0 0 0 0"):
    text = ("g3 1 1 0\n 1 1 1 0 0\n 1 0\n 0 0\n 1 0 1\n 0 0 0 1\n "
            f"{header_discrete}\n 1 0\n 0 0\n 0 0 0 0 0\n" + body)
    path = tmp_path / "t.nl"
    path.write_text(text)
    return str(path)


def test_what_caspar_cannot_solve_is_named(tmp_path):
    with pytest.raises(ModelError, match="discrete"):
        read_nl(_nl(tmp_path, "C0\nv0\nr\n1 1\nb\n3\n", header_discrete="0 1 0 0 0"))
    with pytest.raises(ModelError, match="mod"):
        read_nl(_nl(tmp_path, "C0\no4\nv0\nn2\nr\n1 1\nb\n3\n"))
    with pytest.raises(ModelError, match="myfunc"):
        read_nl(_nl(tmp_path, "F0 1 -1 myfunc\nC0\nf0 1\nv0\nr\n1 1\nb\n3\n"))
    (tmp_path / "b.nl").write_bytes(b"b3 1 1 0\n")
    with pytest.raises(ModelError, match="text NL"):
        read_nl(str(tmp_path / "b.nl"))


def test_deep_binary_chains_and_amp_power_codes(tmp_path):
    """AMPL's own operator codes (o76 x^c, o77 x^2, o78 c^x, o1 minus, n-ary min/max)
    and a 5,000-deep chain of binary sums (read without recursion)."""
    depth = 5000
    chain = "o0\nv0\n" * depth + "n0\n"
    body = ("C0\n" + chain + "r\n1 1e9\nb\n0 0.5 2\n"
            "O0 0\no1\no54\n3\no76\nv0\nn3\no77\nv0\no78\nn2\nv0\no12\n2\nv0\nn1\n"
            "x1\n0 1.5\n")
    nl = read_nl(_nl(tmp_path, body))
    ev = Problem(nl.model).evaluator("cpu")
    x = np.array([1.5])
    assert ev.cons(x)[0] == pytest.approx(depth * 1.5)
    assert ev.obj(x) == pytest.approx(1.5 ** 3 + 1.5 ** 2 + 2 ** 1.5 - max(1.5, 1.0))
