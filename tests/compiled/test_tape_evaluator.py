"""The general path's tape evaluator (caspar_backend.compiled.tape_evaluator): its values
against the generated NumPy code's (an independent implementation of the same
expressions) and against central finite differences; which evaluator the general path
takes; and that a general-path solve with the tape is the compiled path's bit for bit,
exp models included."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.compiled import dispatch  # noqa: E402
from caspar_backend.compiled.tape import build_model  # noqa: E402
from caspar_backend.compiled.tape_evaluator import (EvalTables, TapeEvaluator,  # noqa: E402
                                                    tape_evaluator_for)
from caspar_backend.evaluators.numpy_eval import NumpyEvaluator  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402
from tests.support.threads import results_in_threads  # noqa: E402

BANK = {b.name: b for b in bank(include_slow=False)}
#: tape op codes of functions whose NumPy loops may differ from the C library's in the
#: last bit (exp, log, powers, the trigonometric and hyperbolic families, erf): a model
#: with none of them evaluates bit for bit alike (module docstring of the evaluator)
ROUNDING_OPS = {15, 16} | (set(range(20, 37)) - {22, 32}) | {44, 45, 46}


@pytest.fixture(scope="module", autouse=True)
def kernels():
    dispatch.kernels_ready(wait=True)


def _problem(name):
    d = BANK[name].build()
    return from_casadi(_nlp(d), **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}), d


def _points(problem, d, k=3, seed=0):
    rng = np.random.default_rng(seed)
    x0 = np.asarray(d["x0"], float)
    for _ in range(k):
        yield x0 + 0.3 * rng.standard_normal(problem.n), rng.standard_normal(problem.m)


def _pair(problem):
    ev = problem.evaluator("cpu", p=problem.p)
    tape = tape_evaluator_for(ev)
    assert type(ev) is NumpyEvaluator and type(tape) is TapeEvaluator
    return ev, tape


@pytest.mark.parametrize("name", sorted(BANK))
def test_values_equal_the_generated_codes(name):
    problem, d = _problem(name)
    if EvalTables.of(problem) is None:
        pytest.skip(f"{name}: an expression without a tape op code")
    ev, tape = _pair(problem)
    exact = not ROUNDING_OPS & set(build_model(problem)["op"].tolist())
    for x, lam in _points(problem, d):
        with np.errstate(all="ignore"):
            pairs = [(tape.obj(x), ev.obj(x)), (tape.grad(x), ev.grad(x)),
                     (tape.cons(x), ev.cons(x)), (tape.jac_values(x), ev.jac_values(x)),
                     (tape.hess_values(x, lam, 0.7), ev.hess_values(x, lam, 0.7))]
            g = np.empty(problem.m)
            pairs.append((tape.obj_and_cons(x, g), ev.obj(x)))
            pairs.append((g, ev.cons(x)))
            gr, jv = np.empty(problem.n), np.empty(ev.nnz_jac)
            tape.grad_and_jac(x, gr, jv)
            pairs += [(gr, ev.grad(x)), (jv, ev.jac_values(x))]
        for a, b in pairs:
            a, b = np.atleast_1d(a), np.atleast_1d(b)
            finite = np.isfinite(b)
            np.testing.assert_array_equal(np.isfinite(a), finite)
            if exact:
                np.testing.assert_array_equal(a[finite], b[finite])
            else:
                np.testing.assert_allclose(a[finite], b[finite], rtol=1e-13, atol=1e-300)


def test_derivatives_against_finite_differences():
    """An independent check of the tape's gradient and Jacobian (hs071: products and a
    sum of squares)."""
    problem, d = _problem("hs071")
    _, tape = _pair(problem)
    x = np.asarray(d["x0"], float) + 0.1
    h = 1e-6
    fd_g = np.array([(tape.obj(x + h * e) - tape.obj(x - h * e)) / (2 * h)
                     for e in np.eye(problem.n)])
    np.testing.assert_allclose(tape.grad(x), fd_g, rtol=1e-7)
    J = np.zeros((problem.m, problem.n))
    np.add.at(J, (tape.jac_rows, tape.jac_cols), tape.jac_values(x))
    fd_J = np.stack([(tape.cons(x + h * e) - tape.cons(x - h * e)) / (2 * h)
                     for e in np.eye(problem.n)], axis=1)
    np.testing.assert_allclose(J, fd_J, rtol=1e-7, atol=1e-9)


def test_outputs_of_any_layout_and_parameters():
    """A strided output or multiplier vector is filled through a buffer (no new compile
    of the kernels); ``bound(p)`` evaluators own their parameters."""
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets

    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    t1, t2 = arm_targets(2)
    ev, tape = NumpyEvaluator(problem).bound(t1), None
    tape = tape_evaluator_for(ev)
    other = tape.bound(t2)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(tape.cons(x), ev.cons(x))
    np.testing.assert_array_equal(other.cons(x), ev.bound(t2).cons(x))
    np.testing.assert_array_equal(tape.parameters(), t1)
    wide = np.zeros(2 * problem.m)
    tape.cons(x, wide[::2])
    np.testing.assert_array_equal(wide[::2], ev.cons(x))
    lam = np.arange(1.0, 2 * problem.m + 1)[::2]
    np.testing.assert_array_equal(tape.hess_values(x, lam), ev.hess_values(x, lam))
    tape.set_params(t2)
    np.testing.assert_array_equal(tape.cons(x), other.cons(x))


def test_threads_each_with_its_own_evaluator():
    problem, d = _problem("hs071")
    ev = problem.evaluator("cpu")
    base = tape_evaluator_for(ev.bound(problem.p))
    points = [x for x, _ in _points(problem, d, k=8, seed=3)]
    want = [ev.bound(problem.p).hess_values(x, np.ones(problem.m)) for x in points]
    def work(k):
        mine = base.bound(problem.p)
        for _ in range(200):
            h = mine.hess_values(points[k], np.ones(problem.m))
        return h

    got = results_in_threads(work, len(points))
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_which_evaluator_the_general_path_takes(monkeypatch):
    from caspar_backend.evaluators.hessian_override import HessianOverride

    problem, _ = _problem("hs071")
    ev = problem.evaluator("cpu", p=problem.p)
    choose = dispatch.general_cpu_evaluator
    assert choose(ev, "numpy") is ev
    assert type(choose(ev, "auto")) is TapeEvaluator       # kernels loaded
    monkeypatch.setattr(dispatch, "general_path_kernels", lambda: False)
    assert choose(ev, "auto") is ev
    assert type(choose(ev, "tape")) is TapeEvaluator
    given = HessianOverride(ev, ev.hess_rows, ev.hess_cols,
                            lambda x, lam, of, p: np.zeros(len(ev.hess_rows)))
    assert choose(given, "tape") is given


@pytest.mark.parametrize("name", sorted(BANK))
def test_general_path_with_the_tape_is_the_compiled_paths(name):
    """The general path with the tape evaluator and the compiled path: one arithmetic,
    so exp/log models too get the same status, iterations, x and f bit for bit (with the
    generated NumPy code only to rounding: tests/compiled/test_dispatch.py)."""
    problem, d = _problem(name)
    kw = dict(print_level=0, **dict(BANK[name].options))
    r = problem.solve(d["x0"], compiled_path="yes", **kw)
    e = problem.solve(d["x0"], compiled_path="no", cpu_evaluator="tape", **kw)
    if r.extra.get("path") != "compiled" and "resumed_at" not in r.extra:
        pytest.skip(f"{name} does not take the compiled path")
    assert (r.status, r.iterations) == (e.status, e.iterations)
    np.testing.assert_array_equal(r.x, e.x)
    assert r.f == e.f or (np.isnan(r.f) and np.isnan(e.f))
    assert r.counts == e.counts


def test_a_process_first_solve_does_not_load_the_kernels(tmp_path):
    """As the compiled path: a script that solves once does not pay the kernels' load;
    from its second solve on the general path evaluates and factorizes through them."""
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import sys
        from caspar_backend import from_casadi
        from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
        nlp, bounds = arm_ik()
        P = from_casadi(nlp, **bounds)
        # (the arm's K is small: the kernels' Bunch-Kaufman factorizes it)
        mods = ("caspar_backend.compiled.kernels.tape_eval",
                "caspar_backend.compiled.kernels.bunch_kaufman")
        seen = []
        for t in [arm_targets(1)[0]] * 2:
            r = P.solve(x0=[0.1, 0.2, 0.3], p=t, print_level=0, compiled_path="no")
            seen.append([m in sys.modules for m in mods] + [r.iterations])
        print(seen)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300, cwd=str(tmp_path.parent))
    assert out.returncode == 0, out.stderr
    first, second = eval(out.stdout.strip().splitlines()[-1])
    assert first[:2] == [False, False] and second[:2] == [True, True]
    assert first[2] == second[2]
