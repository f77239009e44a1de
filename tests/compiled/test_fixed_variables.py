"""Fixed variables (lbx == ubx; IPOPT's fixed_variable_treatment = make_parameter) on the
compiled path: the same solve as the general path (``compiled_path='no'``) -- status,
iterations, x, f, g, lam_g, lam_x (a fixed variable's: minus its reduced gradient), the
history, the evaluation counts and the final errors bit for bit -- through
``Problem.solve``, ``solve_compiled``, nlpsol, Pyomo and the CPU batch, a problem that
fixing makes square too (IPOPT's feasibility multipliers, kernels/termination.py)."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

import casadi as ca  # noqa: E402

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402
from caspar_backend.compiled import dispatch  # noqa: E402
from caspar_backend.compiled.solve import layout_for, solve_compiled  # noqa: E402
from tests.support.casadi_ocp import direct_multiple_shooting  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

BOUNDS = ("lbx", "ubx", "lbg", "ubg")


@pytest.fixture(scope="module", autouse=True)
def kernels():
    dispatch.kernels_ready(wait=True)


def _both(problem, *args, **kw):
    """(compiled run, general run) of ``problem.solve``; the first must have taken the
    compiled path."""
    r = problem.solve(*args, print_level=0, compiled_path="yes", **kw)
    e = problem.solve(*args, print_level=0, compiled_path="no", **kw)
    assert r.extra.get("path") == "compiled" and "path" not in e.extra
    return r, e


def _identical(r, e):
    assert (r.status, r.iterations, r.f) == (e.status, e.iterations, e.f)
    for k in ("x", "g", "lam_g", "lam_x"):
        np.testing.assert_array_equal(getattr(r, k), getattr(e, k), err_msg=k)
    assert r.history == e.history
    assert r.counts == e.counts
    assert r.final_errors == e.final_errors


def _bank(name):
    d = {b.name: b for b in bank(include_slow=False)}[name].build()
    return from_casadi(_nlp(d)), d


def test_bank_fixed_variables():
    problem, d = _bank("fixed_variables")
    r, e = _both(problem, d["x0"], **{k: d[k] for k in BOUNDS})
    _identical(r, e)
    assert r.status == "Solve_Succeeded" and r.x[1] == 0.5 and r.x[3] == 2.0
    assert r.lam_x[1] != 0.0 and r.lam_x[3] != 0.0          # the reduced gradients


def test_all_but_one_variable_fixed():
    problem, d = _bank("fixed_variables")
    lbx = np.array([0.3, 0.5, -np.inf, 2.0])
    ubx = np.array([0.3, 0.5, np.inf, 2.0])
    r, e = _both(problem, d["x0"], lbx=lbx, ubx=ubx, lbg=d["lbg"], ubg=d["ubg"])
    _identical(r, e)
    assert r.status == "Solve_Succeeded"
    lay = layout_for(problem, lbx, ubx, np.asarray(d["lbg"], float).reshape(-1),
                     np.asarray(d["ubg"], float).reshape(-1))
    assert (lay.sizes["nx"], lay.sizes["nfix"]) == (1, 3)


@pytest.mark.parametrize("sym", ["SX"])
def test_direct_multiple_shooting_initial_state_fixed(sym):
    """CasADi's direct multiple shooting example (the initial state fixed by lbw == ubw),
    then the MPC pattern: the same problem from other initial states (one layout)."""
    nlp, a = direct_multiple_shooting(sym=sym)
    problem = from_casadi(nlp)
    r, e = _both(problem, a["x0"], **{k: a[k] for k in BOUNDS})
    _identical(r, e)
    assert r.status == "Solve_Succeeded"
    lays = set()
    for x_init in ([0.1, 0.9], [-0.2, 0.5], [0.0, -0.7]):
        lbx, ubx, x0 = a["lbx"].copy(), a["ubx"].copy(), a["x0"].copy()
        lbx[:2] = ubx[:2] = x0[:2] = x_init
        r, e = _both(problem, x0, lbx=lbx, ubx=ubx, lbg=a["lbg"], ubg=a["ubg"])
        _identical(r, e)
        np.testing.assert_array_equal(r.x[:2], x_init)
        lays.add(id(layout_for(problem, lbx, ubx, a["lbg"], a["ubg"])))
    assert len(lays) == 1


def test_ik_with_a_fixed_joint_and_parameters():
    """A fixed variable in a parametric model, and the fixed set as part of the bound
    structure: a layout per fixed set, the free problem's own layout untouched."""
    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    lbx = np.array(bounds["lbx"], float)
    ubx = np.array(bounds["ubx"], float)
    free_lay = layout_for(problem, lbx, ubx, np.array([-np.inf]), np.array([2.5]))
    for j in (0, 2):
        lb, ub = lbx.copy(), ubx.copy()
        lb[j] = ub[j] = 0.4
        for t in arm_targets(10, seed=j):
            r, e = _both(problem, x0=[0.1, 0.2, 0.3], p=t, lbx=lb, ubx=ub)
            _identical(r, e)
            d = solve_compiled(problem, [0.1, 0.2, 0.3], t, lbx=lb, ubx=ub, print_level=0)
            _identical(d, e)
        lay = layout_for(problem, lb, ub, np.array([-np.inf]), np.array([2.5]))
        assert lay is not free_lay and lay.sizes["nx"] == 2


def test_fixing_that_makes_the_problem_square_is_the_general_paths_solve():
    """Two of three variables fixed, one equality row: square (IPOPT's IsSquareProblem),
    solved on the compiled path with its feasibility multipliers as the general path
    solves it."""
    x = ca.SX.sym("x", 3)
    problem = from_casadi({"x": x, "f": ca.sumsqr(x),
                           "g": ca.vertcat(x[0] * x[1] + x[2] ** 3 - 2)})
    kw = dict(lbx=[1.0, 0.5, -10], ubx=[1.0, 0.5, 10], lbg=[0.0], ubg=[0.0])
    r = problem.solve([1.0, 0.5, 1.0], print_level=0, compiled_path="yes", **kw)
    e = problem.solve([1.0, 0.5, 1.0], print_level=0, compiled_path="no", **kw)
    assert r.extra["path"] == "compiled" and "path" not in e.extra
    assert r.status == e.status == "Solve_Succeeded"
    assert r.iterations == e.iterations and r.f == e.f
    np.testing.assert_array_equal(r.x, e.x)
    np.testing.assert_array_equal(r.lam_x, e.lam_x)


def test_the_examples_mx_model_is_inlined_and_compiled():
    """The example's own MX model: its RK4 interval calls ``f`` 16 times along one path,
    inside one call of ``F`` (3 inputs) -- a short chain (adapters/casadi/chains.py), so
    ``f`` is inlined, not an opaque call: the same problem as the SX model, solved on the
    compiled path as IPOPT solves it."""
    nlp, a = direct_multiple_shooting(sym="MX")
    problem = from_casadi(nlp)
    assert problem.extended is None
    r, e = _both(problem, a["x0"], **{k: a[k] for k in BOUNDS})
    assert r.status == e.status == "Solve_Succeeded"
    assert r.iterations == e.iterations and r.f == e.f
    ref = ca.nlpsol("ref", "ipopt", nlp, {"print_time": False, "ipopt.print_level": 0,
                                          "ipopt.sb": "yes"})
    out = ref(**a)
    assert ref.stats()["iter_count"] == r.iterations
    assert abs(float(out["f"]) - r.f) <= 1e-10 * abs(r.f)


def test_nlpsol_front_door():
    from caspar_backend.casadi import nlpsol

    nlp, a = direct_multiple_shooting(sym="SX")
    out = {}
    for mode in ("yes", "no"):
        S = nlpsol("S", "caspar", nlp, {"print_time": False,
                                        "caspar": {"print_level": 0, "compiled_path": mode}})
        r = S(**a)
        st = S.stats()
        out[mode] = ({k: np.array(r[k]) for k in ("x", "f", "g", "lam_g", "lam_x")},
                     st["return_status"], st["iter_count"],
                     st["caspar"]["extra"].get("path"))
    (rc, sc, ic, pc), (re_, se, ie, pe) = out["yes"], out["no"]
    assert (pc, pe) == ("compiled", None)
    assert (sc, ic) == (se, ie) and sc == "Solve_Succeeded"
    for k in rc:
        np.testing.assert_array_equal(rc[k], re_[k], err_msg=k)


def test_cpu_batch_with_fixed_variables_equals_single_solves():
    """solve_batch on the CPU: the kernel solves the instances (no longer refused for
    fixed variables), each equal to its own Problem.solve, the multipliers of the fixed
    variables included."""
    nlp, a = direct_multiple_shooting(sym="SX")
    problem = from_casadi(nlp)
    rng = np.random.default_rng(2)
    B = 6
    init = np.stack([rng.uniform(-0.2, 0.4, B), rng.uniform(0.2, 1.2, B)], axis=1)
    LBX, UBX, X0 = (np.tile(a[k], (B, 1)) for k in ("lbx", "ubx", "x0"))
    LBX[:, :2] = UBX[:, :2] = X0[:, :2] = init
    res = problem.solve_batch(x0=X0, lbx=LBX, ubx=UBX, lbg=a["lbg"], ubg=a["ubg"],
                              print_level=0)
    assert set(res.path) == {"kernel"}, set(res.reason)
    for b in range(B):
        s = problem.solve(X0[b], lbx=LBX[b], ubx=UBX[b], lbg=a["lbg"], ubg=a["ubg"],
                          print_level=0)
        assert (res.status[b], res.iterations[b], res.f[b]) == (s.status, s.iterations, s.f)
        for k in ("x", "g", "lam_g", "lam_x"):
            np.testing.assert_array_equal(getattr(res, k)[b], getattr(s, k), err_msg=k)


def test_pyomo_front_door(monkeypatch):
    """Pyomo: a Var fixed by ``fix()`` is a parameter of the compiled model (the adapter
    removes it from x), a Var whose bounds are equal is a fixed variable (lbx == ubx);
    with both, a maximized objective, the compiled solve equals the general one."""
    pyo = pytest.importorskip("pyomo.environ")
    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))
    import caspar_backend.compiled.solve as solve_mod

    paths = []
    checked = solve_mod.solve_checked

    def spy(problem, x0, p, bounds, opts, *clocks, **kw):
        res = checked(problem, x0, p, bounds, opts, *clocks, **kw)
        paths.append((problem.n, None if res is None else res.extra["path"],
                      int(np.count_nonzero(bounds[0] == bounds[1]))))
        return res
    monkeypatch.setattr(solve_mod, "solve_checked", spy)

    def model():
        m = pyo.ConcreteModel()
        m.x = pyo.Var(range(4), initialize=0.5, bounds=(-3, 3))
        m.y = pyo.Var(bounds=(1.25, 1.25), initialize=0.0)
        m.x[3].fix(0.7)
        m.obj = pyo.Objective(expr=-sum((m.x[i] - i) ** 2 for i in range(4))
                              + m.x[0] * m.y - m.y * m.x[3], sense=pyo.maximize)
        m.c = pyo.Constraint(expr=m.x[0] + m.x[1] ** 2 + m.y * m.x[2] <= 3)
        m.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        m.rc = pyo.Suffix(direction=pyo.Suffix.IMPORT)
        return m

    out = {}
    for mode in ("yes", "no"):
        m = model()
        res = pyo.SolverFactory("caspar").solve(
            m, options={"print_level": 0, "compiled_path": mode})
        assert str(res.solver.termination_condition) == "optimal"
        out[mode] = ([pyo.value(m.x[i]) for i in range(4)] + [pyo.value(m.y)],
                     pyo.value(m.obj), m.dual[m.c], m.rc.get(m.y), m.rc.get(m.x[0]))
    assert out["yes"] == out["no"]
    assert out["yes"][3] not in (None, 0.0)     # y's multiplier: minus its reduced gradient
    assert paths[0] == (4, "compiled", 1)      # x[0..2] and y; y fixed, x[3] a parameter
    assert out["yes"][0][3:] == [0.7, 1.25]
