"""Problem.solve and the compiled path (caspar_backend.compiled.dispatch): which solves it
takes, and that a user sees the same thing either way -- status, iterations, x and f bit
for bit, the multipliers, the iteration history, the evaluation counts, the final errors
and the printed log -- against the general path (``compiled_path='no'``)."""
import io
import os

import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402
from caspar_backend.compiled import cache, dispatch  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

X0 = np.array([0.1, 0.2, 0.3])


@pytest.fixture(scope="module")
def ik():
    dispatch.kernels_ready(wait=True)
    nlp, bounds = arm_ik()
    return from_casadi(nlp, **bounds)


def _solve_both(problem, *args, **kw):
    """(compiled run, general run), each (result, printed text without the timing)."""
    out = []
    for mode in ("yes", "no"):
        s = io.StringIO()
        r = problem.solve(*args, stream=s, compiled_path=mode, **kw)
        # all but the timing and the options that differ between the two runs
        text = "\n".join(line for line in s.getvalue().splitlines()
                         if not line.startswith("Total seconds")
                         and line.split()[:1] not in (["stream"], ["compiled_path"]))
        out.append((r, text))
    return out


def _assert_same(a, b):
    (r, log_r), (e, log_e) = a, b
    assert r.extra["path"] == "compiled" and "path" not in e.extra
    _assert_same_answer(r, e)
    assert log_r == log_e


def _assert_same_answer(r, e):
    """The results ``r`` and ``e`` give the user the same answer and statistics."""
    assert (r.status, r.iterations, r.f) == (e.status, e.iterations, e.f)
    np.testing.assert_array_equal(r.x, e.x)
    np.testing.assert_allclose(r.lam_g, e.lam_g, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.lam_x, e.lam_x, rtol=1e-9, atol=1e-12)
    assert r.history == e.history
    assert r.counts == e.counts
    assert r.final_errors == e.final_errors


def test_ik_default_options_compiled_with_the_general_paths_log(ik):
    for t in arm_targets(5):
        _assert_same(*_solve_both(ik, x0=X0, p=t))


BANK = {b.name: b for b in bank(include_slow=False)}


def _bank_problem(name):
    d = BANK[name].build()
    return from_casadi(_nlp(d), **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}), d


@pytest.mark.parametrize("name", sorted(BANK))
def test_bank_problems_same_log_and_statistics(ik, name):
    problem, d = _bank_problem(name)
    both = _solve_both(problem, d["x0"], print_user_options=True, print_frequency_iter=3,
                       **dict(BANK[name].options))
    (r, log_r), (e, log_e) = both
    if "resumed_at" in r.extra:     # handed over, and resumed (tests/compiled/test_resume.py)
        _assert_same_answer(r, e)
        assert log_r == log_e
        return
    if r.extra.get("path") != "compiled":
        pytest.skip(f"{name} does not take the compiled path (a square problem, "
                    "start_with_resto, or a log of evaluation errors)")
    _assert_same(*both)


def test_auto_takes_small_problems_only(ik, monkeypatch):
    r = ik.solve(x0=X0, p=arm_targets(1)[0], print_level=0)
    assert r.extra["path"] == "compiled"
    assert "path" not in ik.solve(x0=X0, p=arm_targets(1)[0], print_level=0,
                                  compiled_path="no").extra
    monkeypatch.setattr(dispatch, "AUTO_MAX_SIZE", ik.n + ik.m - 1)
    assert "path" not in ik.solve(x0=X0, p=arm_targets(1)[0], print_level=0).extra
    # 'yes' ignores the size
    assert ik.solve(x0=X0, p=arm_targets(1)[0], print_level=0,
                    compiled_path="yes").extra["path"] == "compiled"


def test_options_it_does_not_implement_go_to_the_general_path(ik):
    t = arm_targets(1)[0]
    for opts in (dict(mu_strategy="adaptive"),
                 dict(iteration_callback=lambda ipm: None),
                 dict(hessian_approximation="limited-memory")):
        r = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes", **opts)
        assert "path" not in r.extra, opts


@pytest.mark.parametrize("name", ["mumps", "ma27", "ma57", "qdldl"])
def test_ipopts_linear_solvers_take_the_compiled_path(ik, name, monkeypatch):
    """A script's linear_solver='mumps' (or another IPOPT solver caspar does not have)
    runs as qdldl, on the general path and so on the kernels too -- the same answer and
    log as the general path's, and the general path's warning naming the option; where
    Intel MKL makes 'pardisomkl' real, it stays on the general path."""
    import warnings

    from caspar_backend.linsolve import pardiso_mkl

    t = arm_targets(1)[0]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        both = _solve_both(ik, x0=X0, p=t, print_level=5, linear_solver=name)
    _assert_same(*both)
    said = [str(x.message) for x in w if "linear_solver" in str(x.message)]
    # one per path (none for 'mumps', IPOPT's default)
    assert len(said) == (0 if name in ("qdldl", "mumps") else 2), said
    monkeypatch.setattr(pardiso_mkl, "pardiso_available", lambda: True)
    r = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes", linear_solver="pardisomkl")
    assert "path" not in r.extra


def test_every_option_at_ipopts_default_keeps_the_compiled_path():
    """A script that spells out IPOPT's defaults (mu_oracle, sigma_max, ...) is solved
    by the kernels: every option of the table, given at its default, is implemented or
    inert there (compiled/options.py)."""
    from caspar_backend.compiled.options import resolve
    from caspar_backend.solver.option_table import OPTIONS

    refused = [(name, resolve({name: o.default}, clocked=True)[1])
               for name, o in OPTIONS.items() if o.default is not None]
    assert [r for r in refused if r[1]] == []


#: options the kernels take at any value: inert while their switch is off, or read only
#: by the (soft) restoration the general path runs after a hand-over
_INERT = [dict(mu_oracle="loqo", sigma_max=10.0, mu_min=1e-9, filter_margin_fact=1e-3),
          dict(limited_memory_max_history=3, inertia_free_tol=1e-3, recalc_y_feas_tol=1e-3,
               expect_infeasible_problem_ytol=1e3, derivative_test_tol=1e-2),
          dict(soft_resto_pderror_reduction_factor=0.0, required_infeasibility_reduction=0.5,
               resto_penalty_parameter=10.0, bound_mult_reset_threshold=1.0),
          dict(max_soft_resto_iters=0, constr_mult_reset_threshold=10.0,
               nlp_lower_bound_inf=-1e10, nlp_upper_bound_inf=1e10)]


@pytest.mark.parametrize("name", ["hs071", "needs_restoration_circle", "infeasible_disc_halfplane",
                                  "restoration_to_local_infeasibility_wb",
                                  "chained_rosenbrock_10"])
@pytest.mark.parametrize("k", range(len(_INERT)))
def test_inert_and_restoration_options_keep_the_general_paths_answer(name, k):
    """(The whole bank x every such option: benchmarks/results/raw/
    cpu_2026-12-05_session44/inert_option_sweep.py, 1,608 solves, 0 differing.)"""
    if name not in BANK:
        pytest.skip(f"{name} not in the bank")
    problem, d = _bank_problem(name)
    opts = dict(_INERT[k], **dict(BANK[name].options))
    (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], print_level=5, **opts)
    _assert_same_answer(r, e)
    assert log_r == log_e
    assert r.counts == e.counts


def test_time_limits_take_the_compiled_path_from_ten_seconds(ik):
    """max_wall_time / max_cpu_time of at least options.TIME_LIMIT_MIN: the compiled path,
    the same answer as without a limit; a solve it hands over keeps the limit for the
    whole solve (its clocks count the attempt).  TIME_LIMIT_MIN stays 20 budgets."""
    from caspar_backend.compiled import options as copts
    from caspar_backend.compiled.solve import TIME_BUDGET

    assert copts.TIME_LIMIT_MIN >= 20 * TIME_BUDGET
    t = arm_targets(1)[0]
    free = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes")
    for opts in (dict(max_wall_time=600.0), dict(max_cpu_time=10.0),
                 dict(max_wall_time=3600.0, max_cpu_time=3600.0)):
        r = ik.solve(x0=X0, p=t, print_level=0, compiled_path="yes", **opts)
        assert r.extra["path"] == "compiled", opts
        assert (r.status, r.iterations, r.f) == (free.status, free.iterations, free.f)
    # handed over (a restoration phase): the general path's answer, within the limit
    problem, d = _bank_problem("restoration_to_local_infeasibility_wb")
    r = problem.solve(d["x0"], print_level=0, compiled_path="yes", max_wall_time=600.0)
    assert "path" not in r.extra and r.status == "Infeasible_Problem_Detected"


def test_handed_over_clock_counts_from_the_callers_start():
    """solve_nlp's ``started``: the time limits count from the caller's start (a compiled
    attempt's time is part of the solve)."""
    import time

    from caspar_backend.solver import solve_nlp

    problem, d = _bank_problem("hs071")
    ev = problem.evaluator("cpu")
    bounds = [problem.model.validated_bounds(k, None) for k in ("lbx", "ubx", "lbg", "ubg")]
    now = (time.perf_counter(), time.process_time())
    r = solve_nlp(ev, *bounds, d["x0"], options=dict(print_level=0, max_wall_time=50.0),
                  started=(now[0] - 100.0, now[1]))
    assert r.status == "Maximum_WallTime_Exceeded" and r.iterations <= 1
    assert r.timings["total"] >= 100.0
    r = solve_nlp(ev, *bounds, d["x0"], options=dict(print_level=0, max_cpu_time=50.0),
                  started=(now[0], now[1] - 100.0))
    assert r.status == "Maximum_CpuTime_Exceeded" and r.iterations <= 1
    r = solve_nlp(ev, *bounds, d["x0"], options=dict(print_level=0, max_wall_time=50.0))
    assert r.status == "Solve_Succeeded"


def test_long_solves_go_on_past_the_time_budget(ik):
    """A compiled run takes at most its time budget of iterations (solve.iteration_budget);
    a solve needing more goes on in the general path from there and is handed back to
    the kernels after one iteration, with the answer a budget-free run gives."""
    from caspar_backend.compiled.solve import iteration_budget, layout_for

    problem, d = _bank_problem("chained_rosenbrock_100")
    lay = layout_for(problem, *(np.asarray(problem.model.validated_bounds(k, None), float)
                                for k in ("lbx", "ubx", "lbg", "ubg")))
    budget = iteration_budget(lay)
    # (tiny_step_y_tol 0: the tiny steps at mu's floor do not end the solve)
    opts = dict(print_level=0, tol=1e-300, acceptable_iter=0, tiny_step_y_tol=0.0)
    within = problem.solve(d["x0"], max_iter=budget, **opts)
    assert within.extra["path"] == "compiled"
    assert within.status == "Maximum_Iterations_Exceeded" and within.iterations == budget
    beyond = problem.solve(d["x0"], max_iter=budget + 2, **opts)
    assert beyond.extra["path"] == "compiled" and beyond.iterations == budget + 2
    _assert_same_answer(beyond, problem.solve(d["x0"], max_iter=budget + 2,
                                              compiled_path="no", **opts))


def test_evaluation_errors_with_a_log_go_to_the_general_path(ik):
    """The general path names the function in "Cutting back alpha due to evaluation
    error"; silent solves keep the compiled path."""
    import casadi as ca

    x = ca.SX.sym("x")
    problem = from_casadi({"x": x, "f": (x - 2) ** 2 + ca.log(x)}, lbx=[-10.0], ubx=[10.0])
    s = io.StringIO()
    r = problem.solve(x0=[0.5], stream=s, compiled_path="yes", bound_push=1e-12)
    quiet = problem.solve(x0=[0.5], print_level=0, compiled_path="yes", bound_push=1e-12)
    general = problem.solve(x0=[0.5], print_level=0, compiled_path="no", bound_push=1e-12)
    assert (quiet.status, quiet.iterations, quiet.f) == (general.status, general.iterations,
                                                         general.f)
    if "Cutting back alpha" in s.getvalue():
        assert "path" not in r.extra
        assert quiet.extra["path"] == "compiled"


def test_ready_marker_and_background_compile_rules(tmp_path, monkeypatch):
    monkeypatch.setenv("CASPAR_CACHE_DIR", str(tmp_path))
    assert not cache.is_ready()
    cache.mark_ready()
    assert cache.is_ready()
    assert cache.kernel_cache_dir().parent == tmp_path / "numba"
    # disabled by the environment, or another process compiling: nothing is started
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "0")
    assert dispatch.start_background_compile() is False
    monkeypatch.setenv("CASPAR_BACKGROUND_COMPILE", "1")
    (cache.kernel_cache_dir() / "compiling").write_text("123")
    assert dispatch.start_background_compile() is False


def test_caspar_warmup_command(ik, capsys):
    from caspar_backend.__main__ import main

    assert main(["warmup"]) == 0
    out = capsys.readouterr().out
    assert "compiled kernels ready" in out
    assert "the bulk SX reader's loops ready" in out
    assert cache.is_ready()
    assert os.environ.get("CASPAR_BACKGROUND_COMPILE") == "0"     # conftest's


def test_first_small_solve_of_a_process_takes_the_general_path(ik):
    """A fresh process: its first 'auto' solve leaves the kernels unloaded and Numba
    unimported (loading costs more than a small solve), its second loads them and takes
    the compiled path; both answers equal.  compiled_path='yes' loads them at once."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import json, sys
        import numpy as np
        from caspar_backend import from_casadi
        from caspar_backend.adapters.casadi.models import arm_ik
        from caspar_backend.compiled import dispatch
        nlp, bounds = arm_ik()
        P = from_casadi(nlp, **bounds)
        out = []
        modes = sys.argv[1:]
        numba_before = "numba" in sys.modules
        for mode in modes:
            r = P.solve(x0=[0.1, 0.2, 0.3], print_level=0, compiled_path=mode)
            out.append([r.extra.get("path", "general"), r.iterations, r.f,
                        dispatch._loaded, numba_before, "numba" in sys.modules])
        # what the solves loaded: a single solve's kernels, not the batch's row loops,
        # which load on a batch's first call
        from caspar_backend.compiled.kernels.ipm import solve_instance
        from caspar_backend.compiled.kernels import solve_many
        loaded = [len(solve_instance.overloads), len(solve_many.solve_rows.overloads)]
        b = P.solve_batch(p=np.array([[1.0, 1.0], [0.5, 1.5]]), print_level=0)
        loaded += [len(solve_many.solve_rows.overloads), list(b.path)]
        print(json.dumps(out))
        print(json.dumps(loaded))
    """)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

    def run(*modes):
        res = subprocess.run([sys.executable, "-c", script, *modes], capture_output=True,
                             text=True, timeout=300, cwd=root)
        assert res.returncode == 0, res.stderr
        import json

        lines = res.stdout.strip().splitlines()
        return json.loads(lines[-2]), json.loads(lines[-1])

    (first, second), loaded = run("auto", "auto")
    assert first[0] == "general" and first[3] is False
    # nor does it import Numba (~0.2 s of a first small solve's 0.03 s)
    assert first[4:] == [False, False]
    assert second[0] == "compiled" and second[3] is True
    assert first[1:3] == second[1:3]
    assert loaded[:2] == [1, 0]                         # solve_instance, no row loop yet
    assert loaded[2] == 1 and loaded[3] == ["kernel", "kernel"]
    assert run("yes")[0][0][0] == "compiled"


@pytest.mark.parametrize("limit", ["max_wall_time", "max_cpu_time"])
def test_short_time_limits_stop_the_kernel(limit):
    """A single solve takes the compiled path whatever its time limit: a thread sets the
    kernel's stop slot when the limit passes (compiled/deadline.py) and the kernel ends
    with IPOPT's status at its next termination test.  chained_rosenbrock_1000 needs
    ~1,500 iterations (~0.2 s); a limit of 0.02 s ends it after a fraction of them, and
    ends it on the general path likewise; a limit already passed ends both at iteration
    0."""
    import time

    status = {"max_wall_time": "Maximum_WallTime_Exceeded",
              "max_cpu_time": "Maximum_CpuTime_Exceeded"}[limit]
    problem, d = _bank_problem("chained_rosenbrock_1000")
    full = problem.solve(d["x0"], print_level=0)
    assert full.extra["path"] == "compiled" and full.status == "Solve_Succeeded"
    t0 = time.perf_counter()
    r = problem.solve(d["x0"], print_level=0, **{limit: 0.02})
    took = time.perf_counter() - t0
    assert r.extra["path"] == "compiled" and r.status == status
    assert 0 < r.iterations < full.iterations and took < 0.02 + 0.1
    e = problem.solve(d["x0"], print_level=0, compiled_path="no", **{limit: 0.02})
    assert e.status == status
    for path in ("auto", "no"):
        r0 = problem.solve(d["x0"], print_level=0, compiled_path=path, **{limit: 1e-12})
        assert (r0.status, r0.iterations) == (status, 0), path
