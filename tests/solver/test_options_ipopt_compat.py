"""IPOPT options scripts pass: accepted by every front-end, honoured where caspar can.

Rule under test: a script written for IPOPT never fails on an option IPOPT knows;
where caspar substitutes its own behaviour a ``warnings.warn`` names the option.
"""

from __future__ import annotations

import io
import warnings

import casadi as ca
import numpy as np
import pytest

from caspar_backend import from_casadi
from caspar_backend.casadi import nlpsol
from caspar_backend.errors import OptionError
from caspar_backend.solver.options import resolve_options

#: one value per new option (name -> value a script might pass)
ACCEPTED = {
    "max_cpu_time": 1e6,
    "print_frequency_iter": 2,
    "fixed_variable_treatment": "make_parameter_nodual",
    "derivative_test": "first-order",
    "derivative_test_tol": 1e-3,
    "derivative_test_perturbation": 1e-7,
    "derivative_test_print_all": "no",
    "file_print_level": 5,
    "honor_original_bounds": "yes",
    "linear_solver": "mumps",
}

#: options whose value caspar replaces (a warning is expected)
WARNS = {("linear_solver", "ma27"),
         ("fixed_variable_treatment", "make_constraint")}


def rosen():
    x = ca.SX.sym("x", 2)
    return {"x": x, "f": (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2,
            "g": x[0] ** 2 + x[1] ** 2}


def _problem():
    return from_casadi(rosen(), x0=[-1.2, 1.0], lbg=-np.inf, ubg=2.0)


def _solve(**opts):
    opts.setdefault("stream", io.StringIO())
    return _problem().solve(**opts), opts["stream"]


def test_unknown_names_still_fail():
    with pytest.raises(OptionError, match="did you mean"):
        resolve_options({"max_cpu_tim": 1.0})
    with pytest.raises(OptionError):
        resolve_options({"linear_solver": "ma28"})
    with pytest.raises(OptionError):      # only IPOPT's solvers' prefixes are ignored
        resolve_options({"ma28_pivtol": 1e-8})
    with pytest.raises(OptionError):
        resolve_options({"print_frequency_iter": 0})


def test_defaults_are_ipopts():
    o = resolve_options(None)
    assert (o.max_cpu_time, o.print_frequency_iter, o.fixed_variable_treatment,
            o.derivative_test, o.output_file, o.file_print_level,
            o.honor_original_bounds) == (1e20, 1, "make_parameter", "none", "", 5, False)


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_core_accepts(name):
    ref, _ = _solve(print_level=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res, _ = _solve(**{name: ACCEPTED[name]})
    assert res.status == "Solve_Succeeded"
    np.testing.assert_allclose(res.x, ref.x, rtol=1e-7, atol=1e-9)
    named = [str(x.message) for x in w if name in str(x.message)]
    assert bool(named) == ((name, ACCEPTED[name]) in WARNS), named


@pytest.mark.parametrize("name,value", sorted(WARNS))
def test_substitution_warns(name, value):
    with pytest.warns(UserWarning, match=name):
        res, _ = _solve(**{name: value})
    assert res.status == "Solve_Succeeded"


#: IPOPT's options of its linear solvers, as scripts written for IPOPT set them
LINEAR_SOLVER_OPTIONS = {"hsllib": "libhsl.so", "linear_system_scaling": "mc19",
                         "ma27_pivtol": np.float64(1e-8), "ma57_automatic_scaling": "yes",
                         "mumps_mem_percent": 2000, "pardiso_matching_strategy": "complete"}


@pytest.mark.parametrize("name", sorted(LINEAR_SOLVER_OPTIONS))
def test_linear_solver_options_are_ignored_with_a_warning(name):
    """Accepted in every front-end's table, ignored (the same solve), one warning naming
    the option and its value as a plain number; the compiled path is not given up."""
    value = LINEAR_SOLVER_OPTIONS[name]
    ref, _ = _solve(print_level=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res, _ = _solve(print_level=0, **{name: value})
        opts = resolve_options({name: value})
    assert (res.status, res.iterations, res.extra.get("path")) == \
        (ref.status, ref.iterations, ref.extra.get("path"))
    np.testing.assert_array_equal(res.x, ref.x)
    named = [str(x.message) for x in w if f"option {name}=" in str(x.message)]
    assert named and all("IPOPT's linear solver options" in m and "np.float64" not in m
                         for m in named), named
    assert name not in opts.user and name not in opts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S = nlpsol("S", "caspar", rosen(), {"ipopt": {name: value, "print_level": 0},
                                            "print_time": False})
        S(x0=[-1.2, 1.0], lbg=-np.inf, ubg=2.0)
    assert S.stats()["success"]


def test_linear_solver_caspar_names_unchanged():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res, _ = _solve(linear_solver="qdldl")
    assert res.extra["linear_solver"] == "qdldl"
    with pytest.warns(UserWarning, match="linear_solver='ma57'.*qdldl"):
        res, _ = _solve(linear_solver="ma57")
    assert res.extra["linear_solver"] == "qdldl"


def test_max_cpu_time_stops():
    res, out = _solve(max_cpu_time=1e-12)
    assert res.status == "Maximum_CpuTime_Exceeded"
    assert "EXIT: Maximum CPU time exceeded." in out.getvalue()


def test_print_frequency_iter():
    res, out = _solve(print_frequency_iter=5)
    iters = [int(ln.split()[0]) for ln in out.getvalue().splitlines()
             if ln[:4].strip().isdigit() and len(ln.split()) >= 9]
    assert res.iterations > 10
    assert iters == list(range(0, res.iterations + 1, 5))


def test_output_file(tmp_path):
    path = tmp_path / "ipopt.out"
    res, out = _solve(output_file=str(path))
    text = path.read_text()
    assert text == out.getvalue() and "EXIT: Optimal Solution Found." in text
    # print_level 0: console silent, the file still gets the log
    res, out = _solve(output_file=str(path), print_level=0)
    assert out.getvalue() == "" and "EXIT: Optimal Solution Found." in path.read_text()
    quiet = tmp_path / "quiet.out"                  # file_print_level 0: no log there
    _solve(output_file=str(quiet), file_print_level=0, print_level=0)
    assert not quiet.exists() or quiet.read_text() == ""


def test_derivative_test_prints():
    res, out = _solve(derivative_test="second-order")
    assert "No errors detected by derivative checker." in out.getvalue()
    assert res.status == "Solve_Succeeded"
    # no entry above tolerance: no entry line
    assert " grad[" not in out.getvalue() and "* " not in out.getvalue()


def test_derivative_test_print_all_lists_every_entry():
    """IPOPT's derivative_test_print_all: every entry compared gets a line, '*' on those
    above derivative_test_tol (none here, then all of them with a tiny tolerance)."""
    _, out = _solve(derivative_test="second-order", derivative_test_print_all=True)
    lines = [ln for ln in out.getvalue().splitlines()
             if ln[:2] in ("  ", "* ") and ln[2:6] in ("grad", "jac[", "hess")]
    kinds = {ln[2:6] for ln in lines}
    assert kinds == {"grad", "jac[", "hess"} and all(ln[0] == " " for ln in lines)
    assert "No errors detected by derivative checker." in out.getvalue()
    _, out = _solve(derivative_test="second-order", derivative_test_print_all=True,
                    derivative_test_tol=1e-300)
    flagged = [ln for ln in out.getvalue().splitlines() if ln.startswith("* ")]
    assert flagged and "error(s)" in out.getvalue()


def test_honor_original_bounds_projects():
    x = ca.SX.sym("x", 2)
    prob = from_casadi({"x": x, "f": (x[0] + 1) ** 2 + (x[1] - 3) ** 2},
                       x0=[0.5, 0.5], lbx=[0, 0], ubx=[1, 1])
    res = prob.solve(honor_original_bounds="yes", print_level=0)
    assert res.status == "Solve_Succeeded"
    assert np.all(res.x >= 0) and np.all(res.x <= 1)


def test_make_parameter_nodual():
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 2) ** 2 + x[1] ** 2}
    kw = dict(x0=[1.0, 1.0], lbx=[1.0, -5], ubx=[1.0, 5])
    ref = from_casadi(nlp, **kw).solve(print_level=0)
    res = from_casadi(nlp, **kw).solve(print_level=0,
                                        fixed_variable_treatment="make_parameter_nodual")
    assert abs(ref.lam_x[0]) > 1 and res.lam_x[0] == 0.0
    np.testing.assert_allclose(res.x, ref.x)


# ---------------------------------------------------------------- front-ends
def test_casadi_frontend_accepts_all(tmp_path):
    opts = dict(ACCEPTED, output_file=str(tmp_path / "c.out"), print_level=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        S = nlpsol("S", "caspar", rosen(), {"caspar": opts, "print_time": False})
        sol = S(x0=[-1.2, 1.0], lbg=-np.inf, ubg=2.0)
    assert S.stats()["success"]
    np.testing.assert_allclose(np.asarray(sol["x"]).ravel(), [1.0, 1.0], atol=1e-3)
    assert "EXIT: Optimal Solution Found." in (tmp_path / "c.out").read_text()
    S = nlpsol("S", "caspar", rosen(),
               {"caspar": {"max_cpu_time": 1e-12, "print_level": 0}, "print_time": False})
    S(x0=[-1.2, 1.0], lbg=-np.inf, ubg=2.0)
    assert S.stats()["return_status"] == "Maximum_CpuTime_Exceeded"


def test_pyomo_frontend_accepts_all(tmp_path):
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    def model():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(initialize=-1.2)
        m.y = pyo.Var(initialize=1.0)
        m.o = pyo.Objective(expr=(1 - m.x) ** 2 + 100 * (m.y - m.x ** 2) ** 2)
        return m

    m = model()
    opts = dict(ACCEPTED, output_file=str(tmp_path / "p.out"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pyo.SolverFactory("caspar").solve(m, options=opts)
    assert str(res.solver.termination_condition) == "optimal"
    assert abs(pyo.value(m.x) - 1) < 1e-6
    assert "EXIT: Optimal Solution Found." in (tmp_path / "p.out").read_text()
    res = pyo.SolverFactory("caspar").solve(model(), options={"max_cpu_time": 1e-12},
                                            load_solutions=False)
    assert str(res.solver.termination_condition) == "maxTimeLimit"
    assert "CPU" in str(res.solver.message)


#: IPOPT options without effect in caspar: (name, value, whether a warning is expected)
NO_EFFECT = [("check_derivatives_for_naninf", "yes", False),
             ("jacobian_approximation", "exact", False),
             ("jacobian_approximation", "finite-difference-values", True),
             ("gradient_approximation", "finite-difference-values", True),
             ("option_file_name", "ipopt.opt", False), ("option_file_name", "", False),
             ("print_options_documentation", "yes", True)]


@pytest.mark.parametrize("name,value,warns", NO_EFFECT)
def test_options_without_effect_are_accepted(name, value, warns):
    """The same solve in the core and through nlpsol, the compiled path kept; a warning
    naming the option exactly where its value asks for what caspar does not do."""
    ref, _ = _solve(print_level=0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        res, _ = _solve(print_level=0, **{name: value})
        S = nlpsol("S", "caspar", rosen(), {"ipopt": {name: value, "print_level": 0},
                                            "print_time": False})
        S(x0=[-1.2, 1.0], lbg=-np.inf, ubg=2.0)
    assert (res.status, res.iterations, res.extra.get("path")) == \
        (ref.status, ref.iterations, ref.extra.get("path"))
    np.testing.assert_array_equal(res.x, ref.x)
    assert S.stats()["success"]
    named = [str(x.message) for x in w if f"option {name}=" in str(x.message)]
    assert bool(named) == warns, named


def test_options_without_effect_through_pyomo():
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend.pyomo  # noqa: F401  (registers the 'caspar' solver)

    from tests.support.pyomo_nlp_models import one_variable

    m = one_variable()
    s = pyo.SolverFactory("caspar")
    for name, value, _ in NO_EFFECT:
        s.options[name] = value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = s.solve(m)
    assert str(r.solver.termination_condition) == "optimal"
    assert pyo.value(m.x) == pytest.approx(2.0)


@pytest.mark.parametrize("name", ["hs071", "hs015", "optimal_control_200"])
def test_kappa_sigma_below_one_turns_the_safeguard_off_as_ipopt(name):
    """IPOPT accepts any kappa_sigma > 0 and corrects no bound multiplier below 1
    (caspar refused values below 1); each path takes IPOPT's status and iterations."""
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar, run_ipopt

    p = next(p for p in bank() if p.name == name)
    d = dict(p.build(), options=p.options)
    ref = run_ipopt(d, {"kappa_sigma": 0.5})
    for path in ("auto", "no"):
        r = run_caspar(d, {"kappa_sigma": 0.5, "compiled_path": path})
        assert (r.status, r.iterations) == (ref["status"], ref["iter"]), path


@pytest.mark.parametrize("name", ["hs071", "hs016", "hs029", "optimal_control_200"])
def test_limited_memory_without_history_as_ipopt(name):
    """limited_memory_max_history = 0 (IPOPT accepts >= 0; caspar refused 0): B = sigma I,
    sigma from the newest pair alone (IPOPT's LimMemQuasiNewtonUpdater stops after
    sigma); IPOPT's status and iterations."""
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import run_caspar, run_ipopt

    p = next(p for p in bank() if p.name == name)
    d = dict(p.build(), options=p.options)
    o = {"hessian_approximation": "limited-memory", "limited_memory_max_history": 0}
    ref = run_ipopt(d, o)
    r = run_caspar(d, o)
    assert (r.status, r.iterations) == (ref["status"], ref["iter"])
