"""A solve the kernels hand over goes on in the general path from the start of the
iteration it was handed over in (compiled/resume.py, solver/resume.py), instead of
starting again: the user sees what the general path from the start gives -- status,
iterations, x and f bit for bit, the history, the evaluation counts, the final errors
and the printed log -- through Problem.solve, CasADi's nlpsol and Pyomo's
SolverFactory, and through the end of a compiled solve's time budget."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend.compiled import dispatch  # noqa: E402
from caspar_backend.compiled import solve as compiled_solve  # noqa: E402
from tests.compiled.test_dispatch import BANK, _assert_same_answer, _bank_problem  # noqa: E402
from tests.compiled.test_dispatch import _solve_both  # noqa: E402

#: bank problems the kernels hand over after some iterations (restoration phases, a zero
#: pivot the kernels leave to the general path)
HANDED_OVER = ("hs027", "restoration_to_local_infeasibility_wb",
               "infeasible_disc_halfplane")


@pytest.fixture(scope="module")
def ready():
    dispatch.kernels_ready(wait=True)


@pytest.fixture
def points(monkeypatch):
    """The resume points the compiled path returns during the test."""
    seen = []
    make = compiled_solve.resume_point

    def spy(*args):
        p = make(*args)
        seen.append(p)
        return p

    monkeypatch.setattr(compiled_solve, "resume_point", spy)
    return seen


@pytest.mark.parametrize("name", HANDED_OVER)
def test_resumed_solve_is_the_general_paths(ready, points, name):
    problem, d = _bank_problem(name)
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], print_user_options=True,
                                         print_frequency_iter=3, **dict(BANK[name].options))
    assert points and points[0] is not None and "resumed_at" not in e.extra
    # the general path's turn resumed there (and may have handed the solve back): the
    # answer, the statistics and the printed log are the general path's from x0
    _assert_same_answer(r, e)
    assert log_r == log_e


def test_the_end_of_the_time_budget_resumes(ready, points, monkeypatch):
    """A compiled run takes at most its iteration budget (solve.iteration_budget); a
    solve that needs more goes on in the general path from the budget's last iteration,
    which hands it back after one iteration, and so on: 7 kernel iterations, then 1,
    the printed log continued across the turns."""
    monkeypatch.setattr(compiled_solve, "iteration_budget", lambda lay: 7)
    problem, d = _bank_problem("chained_rosenbrock_100")
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], print_level=5)
    assert e.iterations > 16
    assert [p.iteration for p in points][:2] == [7, 15]
    _assert_same_answer(r, e)
    assert log_r == log_e


def test_unresumable_points_solve_from_the_start(ready, points, monkeypatch):
    """Where the state is not the iteration's own (the iterate moved, say), the general
    path solves from the start, as before."""
    from caspar_backend.compiled.kernels.resume_state import R_CLEAN

    make = compiled_solve.resume_point

    def moved(lay, Fb, *rest):
        lay.float_views(Fb, ("RESUME",))["RESUME"][R_CLEAN] = 0.0
        return make(lay, Fb, *rest)

    monkeypatch.setattr(compiled_solve, "resume_point", moved)
    problem, d = _bank_problem("hs027")
    r = problem.solve(d["x0"], print_level=0, compiled_path="yes")
    e = problem.solve(d["x0"], print_level=0, compiled_path="no")
    assert "resumed_at" not in r.extra
    _assert_same_answer(r, e)


def test_nlpsol_resumes(ready, points):
    import casadi as ca

    from caspar_backend.casadi import nlpsol

    d = BANK["hs027"].build()
    nlp = {"x": d["x"], "f": d["f"], "g": d["g"]}
    out = {}
    for mode in ("yes", "no"):
        S = nlpsol("S", "caspar", nlp, {"caspar": {"print_level": 0, "compiled_path": mode},
                                         "print_time": False})
        out[mode] = (S(x0=d["x0"], lbg=d["lbg"], ubg=d["ubg"]), S.stats())
    assert len(points) == 1 and points[0] is not None
    (r, rs), (e, es) = out["yes"], out["no"]
    assert rs["return_status"] == es["return_status"] and rs["iter_count"] == es["iter_count"]
    np.testing.assert_array_equal(np.asarray(ca.DM(r["x"])), np.asarray(ca.DM(e["x"])))


def test_pyomo_resumes(ready, points):
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    def hs027():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(3), initialize=2.0)
        m.obj = pyo.Objective(expr=0.01 * (m.x[0] - 1) ** 2 + (m.x[1] - m.x[0] ** 2) ** 2)
        m.c = pyo.Constraint(expr=m.x[0] + m.x[2] ** 2 + 1 == 0)
        return m

    answers = []
    for mode in ("yes", "no"):
        m = hs027()
        res = pyo.SolverFactory("caspar").solve(m, options=dict(compiled_path=mode))
        answers.append((str(res.solver.termination_condition),
                        res.solver.statistics.black_box.number_of_iterations,
                        [pyo.value(m.x[i]) for i in range(3)]))
    assert len(points) == 1 and points[0] is not None
    assert answers[0] == answers[1]


@pytest.fixture
def hand_backs(monkeypatch):
    """The iterations at which the general path handed the solve back to the kernels."""
    seen = []
    run = compiled_solve.solve_checked

    def spy(*args, start=None, **kw):
        if start is not None:
            seen.append(start.iteration)
        return run(*args, start=start, **kw)

    monkeypatch.setattr(compiled_solve, "solve_checked", spy)
    return seen


#: those the general path hands back after a restoration phase (print_level 0)
HANDED_BACK = ("hs027", "restoration_to_local_infeasibility_wb")


@pytest.mark.parametrize("name", HANDED_OVER)
def test_handed_back_solve_is_the_general_paths(ready, hand_backs, name):
    """Printing nothing, the general path hands a resumed solve back to the kernels at
    the first iteration after the hand-over that they can take; the answer and the
    statistics stay the general path's from the start."""
    problem, d = _bank_problem(name)
    opts = dict(print_level=0, **dict(BANK[name].options))
    r = problem.solve(d["x0"], compiled_path="yes", **opts)
    e = problem.solve(d["x0"], compiled_path="no", **opts)
    assert bool(hand_backs) == (name in HANDED_BACK)
    # the history: the general path's restoration lines, then the kernels' again
    assert [h.iter for h in r.history] == [h.iter for h in e.history]
    _assert_same_answer(r, e)


def test_threads_resume_and_hand_back_their_own_solves(ready):
    """Solves that hand over and back, from 8 threads at once on shared compiled
    problems: each gives its sequential general-path answer (per-thread workspaces, a
    log and a point per solve)."""
    from concurrent.futures import ThreadPoolExecutor

    names = ("hs027", "restoration_to_local_infeasibility_wb", "hs007", "hs071")
    problems = {n: _bank_problem(n) for n in names}
    ref = {n: problems[n][0].solve(problems[n][1]["x0"], print_level=0, compiled_path="no",
                                   **dict(BANK[n].options)) for n in names}

    def solve(k):
        n = names[k % len(names)]
        problem, d = problems[n]
        return n, problem.solve(d["x0"], print_level=0, compiled_path="yes",
                                **dict(BANK[n].options))

    with ThreadPoolExecutor(8) as pool:
        for n, r in pool.map(solve, range(48)):
            _assert_same_answer(r, ref[n])


def test_the_general_paths_view_of_the_kernels_limits():
    """solver/resume.py's copies of the kernels' limits (the general path imports no
    compiled code) are the kernels' own."""
    from caspar_backend.compiled.kernels.record import TAGS
    from caspar_backend.compiled.workspace_layout import FILTER_CAP
    from caspar_backend.solver.resume import KERNEL_FILTER_CAP, KERNEL_TAGS

    assert KERNEL_FILTER_CAP == FILTER_CAP and KERNEL_TAGS == TAGS


def test_acceptable_iterates_carry_over(ready, points, monkeypatch):
    """The termination test's count of acceptable iterates and the latest acceptable
    point go across the turns: with every iterate acceptable and acceptable_iter = 20,
    a solve cut into 7-iteration kernel turns ends Solved_To_Acceptable_Level at the
    general path's iteration."""
    monkeypatch.setattr(compiled_solve, "iteration_budget", lambda lay: 7)
    problem, d = _bank_problem("chained_rosenbrock_100")
    loose = dict(print_level=0, tol=1e-300, acceptable_iter=20, acceptable_tol=1e20,
                 acceptable_dual_inf_tol=1e20, acceptable_constr_viol_tol=1e20,
                 acceptable_compl_inf_tol=1e20, acceptable_obj_change_tol=1e20)
    r = problem.solve(d["x0"], compiled_path="yes", **loose)
    e = problem.solve(d["x0"], compiled_path="no", **loose)
    assert e.status == "Solved_To_Acceptable_Level" and e.iterations > 14
    counts = [p.acceptable_count for p in points]
    assert len(counts) >= 2 and 0 < counts[0] < counts[1]
    assert all(p.acceptable_point is not None for p in points)
    _assert_same_answer(r, e)
