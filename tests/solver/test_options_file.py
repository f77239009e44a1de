"""IPOPT's options file: ipopt.opt in the working directory (or the file
option_file_name names; "" none) is read at every solve and sets the options the code did
not set (one set both ways keeps the code's value, with IPOPT's warning), as IPOPT's
Initialize does -- checked against IPOPT itself (casadi's build), through Problem.solve,
nlpsol and Pyomo."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from caspar_backend.errors import OptionError
from caspar_backend.solver.options import resolve_options

ca = pytest.importorskip("casadi")


def _nlp():
    x = ca.SX.sym("x", 2)
    return {"x": x, "f": (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2}


@pytest.mark.parametrize("code", [{}, {"max_iter": 50}, {"tol": 1e-3}])
def test_ipopt_opt_sets_what_the_code_did_not_as_ipopts_does(tmp_path, monkeypatch, code):
    from caspar_backend.casadi import nlpsol

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ipopt.opt").write_text("# a comment\nmax_iter 3   # trailing comment\n"
                                        "tol 1e-6\n")
    got = {}
    for solver in ("ipopt", "caspar"):
        make = ca.nlpsol if solver == "ipopt" else nlpsol
        S = make("S", solver, _nlp(), {"print_time": False,
                                       solver: dict(code, print_level=0)})
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            S(x0=[-1.2, 1.0])
        got[solver] = (S.stats()["return_status"], S.stats()["iter_count"])
        said = [str(x.message) for x in w if "options file" in str(x.message)]
        if solver == "caspar":
            assert bool(said) == bool(code), said
    assert got["caspar"] == got["ipopt"]
    o = resolve_options(code)
    assert o.max_iter == code.get("max_iter", 3) and o.tol == code.get("tol", 1e-6)


def test_option_file_name_names_another_file_or_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ipopt.opt").write_text("max_iter 3\n")
    (tmp_path / "mine.opt").write_text("max_iter 7\n")
    assert resolve_options({}).max_iter == 3
    assert resolve_options({"option_file_name": "mine.opt"}).max_iter == 7
    assert resolve_options({"option_file_name": ""}).max_iter == 3000
    (tmp_path / "ipopt.opt").write_text("max_iter 4\n")          # edited: read again
    assert resolve_options({}).max_iter == 4


def test_a_bad_file_names_the_file_and_the_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ipopt.opt").write_text("tol 1e-6\nmax_iter\n")
    with pytest.raises(OptionError, match=r"ipopt.opt, line 2: 'max_iter' has no value"):
        resolve_options({})
    (tmp_path / "ipopt.opt").write_text("max_itr 3\n")
    with pytest.raises(OptionError, match="max_itr"):
        resolve_options({})


def test_pyomo_reads_it_too(tmp_path, monkeypatch):
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend.pyomo  # noqa: F401  (registers the 'caspar' solver)

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ipopt.opt").write_text("max_iter 3\n")
    m = pyo.ConcreteModel()
    m.x = pyo.Var(initialize=-1.2)
    m.y = pyo.Var(initialize=1.0)
    m.o = pyo.Objective(expr=(1 - m.x) ** 2 + 100 * (m.y - m.x ** 2) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = pyo.SolverFactory("caspar").solve(m, load_solutions=False)
    assert str(r.solver.termination_condition) == "maxIterations"
    np.testing.assert_equal(r.solver.statistics.black_box.number_of_iterations, 3)


def test_a_working_directory_that_is_gone_means_no_file(tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()                     # os.getcwd() raises from now on
    assert resolve_options({"max_iter": 5}).max_iter == 5


def test_quoted_values_keep_their_spaces(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ipopt.opt").write_text('output_file "my run.txt"  # quoted\nmax_iter 2\n')
    o = resolve_options({})
    assert (o.output_file, o.max_iter) == ("my run.txt", 2)
    (tmp_path / "ipopt.opt").write_text('output_file "my run.txt\n')
    with pytest.raises(OptionError, match="line 1.*unmatched quote"):
        resolve_options({})
