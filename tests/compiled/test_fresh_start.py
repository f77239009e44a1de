"""Solves whose start only the general path implements (least-squares bound multipliers,
a first restoration phase: compiled/options.START_OPTIONS): the general path takes iteration 0, the
kernels go on (solver/resume.FRESH_START), and the user sees the general path's solve --
status, iterations, x and f bit for bit, multipliers, history, counts, final errors and
the printed log -- through Problem.solve, CasADi's nlpsol and Pyomo."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend.adapters.casadi.models import arm_targets  # noqa: E402
from caspar_backend.compiled.options import START_OPTIONS  # noqa: E402
from caspar_backend.solver.option_table import OPTIONS  # noqa: E402
from tests.compiled.test_dispatch import (BANK, X0, _assert_same_answer,  # noqa: E402
                                          _bank_problem, _solve_both, ik)

__all__ = ["ik"]      # the fixture, imported


@pytest.fixture
def handed(monkeypatch):
    """The iterations at which general runs handed the solve to the kernels."""
    from caspar_backend.solver import ipm as ipm_mod

    seen = []
    base = ipm_mod.InteriorPoint.__init__

    def init(self, *a, **kw):
        base(self, *a, **kw)
        seen.append(self.hand_back_after)

    monkeypatch.setattr(ipm_mod.InteriorPoint, "__init__", init)
    return seen


def test_start_options_are_options():
    assert START_OPTIONS <= set(OPTIONS)


def test_warm_start_with_least_square_duals_starts_on_the_general_path(ik, handed):
    """A warm start the kernels do, with an option only the general path has: the general
    path takes iteration 0 and hands the solve to the kernels."""
    targets = arm_targets(2)
    first = ik.solve(x0=X0, p=targets[0], print_level=0)
    both = _solve_both(ik, x0=first.x, p=targets[1], lam_g0=first.lam_g,
                       lam_x0=first.lam_x, warm_start_init_point=True,
                       least_square_init_duals=True, print_frequency_iter=2)
    _assert_same_answer(both[0][0], both[1][0])
    assert both[0][1] == both[1][1]
    assert handed.count(0) == 1


@pytest.mark.parametrize("name", ["hs071", "hs027", "hs034"])
def test_least_square_duals_start_on_the_general_path(ik, handed, name):
    problem, d = _bank_problem(name)
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], least_square_init_duals=True,
                                         **dict(BANK[name].options))
    _assert_same_answer(r, e)
    assert log_r == log_e
    assert 0 in handed


def test_other_options_keep_the_general_path(ik, handed):
    t = arm_targets(1)[0]
    r = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes",
                 warm_start_init_point=True, mu_strategy="adaptive")
    assert "path" not in r.extra and handed == [None]


def test_an_output_file_keeps_the_general_path(ik, handed, tmp_path):
    t = arm_targets(1)[0]
    r = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes", least_square_init_duals=True,
                 output_file=str(tmp_path / "log.txt"))
    assert "path" not in r.extra and handed == [None]
    assert "EXIT: Optimal Solution Found." in (tmp_path / "log.txt").read_text()


def test_nlpsol_warm_start(ik):
    import casadi as ca

    from caspar_backend.adapters.casadi.models import arm_ik
    from caspar_backend.casadi import nlpsol

    nlp, bounds = arm_ik()
    t0, t1 = arm_targets(2)
    out = {}
    for mode in ("yes", "no"):
        S = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0, "compiled_path": mode,
                                                    "warm_start_init_point": "yes"},
                                         "print_time": False})
        a = S(x0=X0, p=t0, **bounds)
        b = S(x0=a["x"], p=t1, lam_g0=a["lam_g"], lam_x0=a["lam_x"], **bounds)
        out[mode] = (b, S.stats())
    (r, rs), (e, es) = out["yes"], out["no"]
    assert rs["return_status"] == es["return_status"] and rs["iter_count"] == es["iter_count"]
    np.testing.assert_array_equal(np.asarray(ca.DM(r["x"])), np.asarray(ca.DM(e["x"])))


def test_pyomo_warm_start(ik):
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    def hs071():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(4), bounds=(1, 5), initialize={0: 1, 1: 5, 2: 5, 3: 1})
        m.obj = pyo.Objective(expr=m.x[0] * m.x[3] * (m.x[0] + m.x[1] + m.x[2]) + m.x[2])
        m.c1 = pyo.Constraint(expr=m.x[0] * m.x[1] * m.x[2] * m.x[3] >= 25)
        m.c2 = pyo.Constraint(expr=sum(m.x[i] ** 2 for i in range(4)) == 40)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT_EXPORT)
        m.ipopt_zL_out = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.ipopt_zU_out = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.ipopt_zL_in = pyo.Suffix(direction=pyo.Suffix.EXPORT)
        m.ipopt_zU_in = pyo.Suffix(direction=pyo.Suffix.EXPORT)
        return m

    answers = []
    for mode in ("yes", "no"):
        m = hs071()
        pyo.SolverFactory("caspar").solve(m, options=dict(compiled_path=mode))
        m.ipopt_zL_in.update(m.ipopt_zL_out)
        m.ipopt_zU_in.update(m.ipopt_zU_out)
        m.x[0].value += 0.01
        res = pyo.SolverFactory("caspar").solve(m, options=dict(
            compiled_path=mode, warm_start_init_point="yes", warm_start_bound_push=1e-6,
            warm_start_mult_bound_push=1e-6))
        answers.append((str(res.solver.termination_condition),
                        res.solver.statistics.black_box.number_of_iterations,
                        [pyo.value(m.x[i]) for i in range(4)]))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("name", ["needs_restoration_circle", "needs_restoration_exp"])
def test_start_with_resto_goes_on_in_the_kernels(ik, handed, name):
    """start_with_resto: the general path's first restoration phase, then the kernels."""
    problem, d = _bank_problem(name)
    assert dict(BANK[name].options).get("start_with_resto")
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], **dict(BANK[name].options))
    _assert_same_answer(r, e)
    assert log_r == log_e
    assert 0 in handed


def test_an_unresumable_first_hand_over_starts_the_general_path_fresh(ik, handed,
                                                                       monkeypatch):
    """Where the kernels' first turn hands over at a point the general path cannot resume
    from, it solves from x0 and still hands the solve back (the same iterates)."""
    from caspar_backend.compiled import solve as compiled_solve

    real, calls = compiled_solve.resume_point, []

    def first_unresumable(lay, Fb, hist, start=None):
        calls.append(start)
        return None if start is None else real(lay, Fb, hist, start)

    monkeypatch.setattr(compiled_solve, "resume_point", first_unresumable)
    problem, d = _bank_problem("hs027")
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"])
    _assert_same_answer(r, e)
    assert log_r == log_e
    assert calls and calls[0] is None and 0 in handed
