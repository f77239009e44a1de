"""Levenberg-Marquardt on small problems against scipy.optimize.least_squares (an
independent implementation), the Jacobian against finite differences, and Ceres'
options, termination types and summary."""

import numpy as np
import pytest
import scipy.optimize as so

from caspar_backend import Graph, OptionError
from caspar_backend.errors import ModelError
from caspar_backend.lsq import LeastSquaresProblem, SolverOptions

TIGHT = dict(function_tolerance=1e-14, gradient_tolerance=1e-14, parameter_tolerance=1e-14)


def exp_fit(n=40, seed=0):
    """``y = a exp(b t) + c`` with noise: (problem, t, y)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0, 2, n)
    y = 2.0 * np.exp(-1.3 * t) + 0.5 + 0.01 * rng.standard_normal(n)
    g = Graph()
    a, b, c = g.var(0), g.var(1), g.var(2)
    res = [a * g.exp(b * float(ti)) + c - float(yi) for ti, yi in zip(t, y)]
    return LeastSquaresProblem.from_expressions(g, res, x0=[1.0, 0.0, 0.0]), t, y


def exp_residual(x, t, y):
    return x[0] * np.exp(x[1] * t) + x[2] - y


@pytest.mark.parametrize("solver", ["DENSE_QR", "DENSE_NORMAL_CHOLESKY",
                                    "SPARSE_NORMAL_CHOLESKY", None])
def test_exp_fit_matches_scipy(solver):
    P, t, y = exp_fit()
    s = P.solve(linear_solver_type=solver, **TIGHT)
    ref = so.least_squares(exp_residual, [1.0, 0.0, 0.0], args=(t, y), xtol=1e-15,
                           ftol=1e-15, gtol=1e-15)
    assert s.termination_type == "CONVERGENCE"
    assert s.final_cost == pytest.approx(ref.cost, rel=1e-10)
    np.testing.assert_allclose(s.x, ref.x, rtol=1e-6)
    assert s.initial_cost == pytest.approx(0.5 * np.sum(exp_residual([1, 0, 0], t, y) ** 2))
    assert s.final_cost == pytest.approx(P.cost(s.x))


def test_jacobian_matches_finite_differences():
    P, t, y = exp_fit()
    x = np.array([1.7, -0.9, 0.3])
    J = P.jacobian(x).toarray()
    h = 1e-7
    fd = np.column_stack([(exp_residual(x + h * e, t, y) - exp_residual(x - h * e, t, y))
                          / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(P.residuals(x), exp_residual(x, t, y), rtol=1e-14, atol=1e-14)


def test_fixed_variable_and_bounds_match_scipy():
    P, t, y = exp_fit()
    # c held constant at 0.4 (lbx == ubx), b bounded above by -1.5 (active at the optimum)
    lbx = np.array([-np.inf, -np.inf, 0.4])
    ubx = np.array([np.inf, -1.5, 0.4])
    s = P.solve(x0=[1.0, -2.0, 0.4], lbx=lbx, ubx=ubx, **TIGHT)
    ref = so.least_squares(lambda z: exp_residual([z[0], z[1], 0.4], t, y), [1.0, -2.0],
                           bounds=([-np.inf, -np.inf], [np.inf, -1.5]), xtol=1e-15,
                           ftol=1e-15, gtol=1e-15)
    assert s.x[2] == 0.4
    assert s.x[1] <= -1.5
    assert s.final_cost == pytest.approx(ref.cost, rel=1e-8)
    np.testing.assert_allclose(s.x[:2], ref.x, rtol=1e-6)
    assert s.num_effective_parameters == 2


def test_termination_types_and_reports():
    P, _, _ = exp_fit()
    s = P.solve(max_num_iterations=1)
    assert s.termination_type == "NO_CONVERGENCE"
    assert s.num_iterations == 1 and "Maximum number of iterations" in s.message
    assert s.is_solution_usable
    assert "Termination: NO_CONVERGENCE" in s.brief_report()
    full = s.full_report()
    for field in ("Initial", "Final", "Linear solver", "Successful steps", "Total"):
        assert field in full
    # a residual that is not finite at the start: FAILURE, nothing usable
    g = Graph()
    bad = LeastSquaresProblem.from_expressions(g, [g.log(g.var(0))], x0=[-1.0])
    f = bad.solve()
    assert f.termination_type == "FAILURE" and not f.is_solution_usable


def test_gradient_tolerance_at_the_solution():
    P, t, y = exp_fit()
    x = P.solve(**TIGHT).x
    s = P.solve(x0=x, gradient_tolerance=1e-6)
    assert s.termination_type == "CONVERGENCE" and "Gradient tolerance" in s.message
    assert s.num_iterations == 0


def test_options_are_typed():
    with pytest.raises(OptionError, match="did you mean max_num_iterations"):
        exp_fit()[0].solve(max_num_iteration=3)
    with pytest.raises(OptionError, match="linear_solver_type"):
        SolverOptions(linear_solver_type="CHOLMOD")
    with pytest.raises(OptionError, match="function_tolerance"):
        SolverOptions(function_tolerance="small")
    assert SolverOptions().max_num_iterations == 50
    assert SolverOptions().initial_trust_region_radius == 1e4
    with pytest.raises(OptionError, match="cpu_evaluator"):
        SolverOptions(cpu_evaluator="fast")


def test_tape_and_numpy_evaluators_give_the_same_solve(monkeypatch):
    """``cpu_evaluator='tape'`` evaluates residuals and Jacobian with the compiled
    kernels' tape interpreter, 'numpy' with the generated NumPy code: the same
    operations in the same order, so a circle fit (sqrt, squares: no operation whose
    NumPy loop rounds differently) takes the same steps to the same bits."""
    pytest.importorskip("numba")
    from caspar_backend.compiled.tape_evaluator import TapeEvaluator

    rng = np.random.default_rng(4)
    th = rng.uniform(0, 2 * np.pi, 60)
    px, py = 1.5 + 2.0 * np.cos(th), -0.7 + 2.0 * np.sin(th)
    px, py = px + 0.02 * rng.standard_normal(60), py + 0.02 * rng.standard_normal(60)
    g = Graph()
    a, b, r = g.var(0), g.var(1), g.var(2)
    res = [g.sqrt((a - float(u)) ** 2 + (b - float(v)) ** 2) - r for u, v in zip(px, py)]
    P = LeastSquaresProblem.from_expressions(g, res, x0=[0.0, 0.0, 1.0])
    calls = []
    real = TapeEvaluator.jac_values
    monkeypatch.setattr(TapeEvaluator, "jac_values",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    tape = P.solve(cpu_evaluator="tape", **TIGHT)
    assert calls
    calls.clear()
    ref = P.solve(cpu_evaluator="numpy", **TIGHT)
    assert not calls
    assert tape.termination_type == ref.termination_type == "CONVERGENCE"
    assert tape.num_iterations == ref.num_iterations
    assert np.array_equal(tape.x, ref.x) and tape.final_cost == ref.final_cost
    np.testing.assert_allclose(tape.x, [1.5, -0.7, 2.0], atol=0.02)


def test_bad_input_names_the_component():
    P, _, _ = exp_fit()
    with pytest.raises(ModelError, match=r"x\[1\]"):
        P.solve(x0=[1.0, np.nan, 0.0])
    with pytest.raises(ModelError, match=r"x\[0\]"):
        P.solve(lbx=[2.0, -np.inf, -np.inf], ubx=[1.0, np.inf, np.inf])


def test_compiled_without_hessians_is_not_an_nlp():
    """Least squares compiles first derivatives only; such a Problem refuses the
    interior point instead of running without a Hessian."""
    P, _, _ = exp_fit()
    assert P.compiled.hessian is False
    assert all(not g.hess for g in P.compiled.constraint_groups)
    with pytest.raises(ModelError, match="without Hessians"):
        P.compiled.solve()


def test_a_resolve_reuses_its_step_solver(monkeypatch):
    """The step solver of a solve is kept for the next solve of the same structure and
    options (``SolverPool``): a re-solve builds none and takes the same steps; other
    options get their own; a solver in use is never handed to a second solve."""
    from caspar_backend.lsq import trust_region
    from caspar_backend.lsq.step_solvers import SolverPool

    P, t, y = exp_fit()
    built = []
    real = trust_region.make_step_solver
    monkeypatch.setattr(trust_region, "make_step_solver",
                        lambda *a, **k: built.append(a[0]) or real(*a, **k))
    first, again = P.solve(**TIGHT), P.solve(**TIGHT)
    assert built == [None]
    assert np.array_equal(first.x, again.x) and first.num_iterations == again.num_iterations
    qr = P.solve(linear_solver_type="DENSE_QR", **TIGHT)
    assert built == [None, "DENSE_QR"] and qr.termination_type == "CONVERGENCE"
    pool = SolverPool()

    def build():
        return object(), None

    a, b = pool.take(build), pool.take(build)      # both in use: two built
    assert a is not b
    pool.give(a)
    assert pool.take(build) is a and pool.take(build) is not a


def test_a_solver_with_large_dense_buffers_is_not_kept(monkeypatch):
    """DENSE_SCHUR's reduced matrices above POOL_MAX_BYTES are freed after the solve, not
    kept for the next one (a 1,000-image scene's hold hundreds of MB)."""
    from caspar_backend.lsq import step_solvers
    from caspar_backend.lsq.step_solvers import SolverPool, dense_buffer_bytes

    S = np.zeros((40, 40))
    solver = type("Dense", (), {"_work": type("Work", (), {"shares": [(0, 0, 0, 0, S)]})()})()
    assert dense_buffer_bytes(solver) == S.nbytes and dense_buffer_bytes(object()) == 0
    pool = SolverPool()
    monkeypatch.setattr(step_solvers, "POOL_MAX_BYTES", S.nbytes - 1)
    pool.give((solver, None))
    assert pool.take(lambda: "new") == "new"
    monkeypatch.setattr(step_solvers, "POOL_MAX_BYTES", S.nbytes)
    pool.give((solver, None))
    assert pool.take(lambda: "new")[0] is solver
