"""Square problems in the kernels (compiled/kernels/termination.py
``feasibility_multipliers``): IPOPT's feasibility multipliers after every accepted step,
the multipliers starting at zero -- the general path's solve bit for bit (status,
iterations, x, f, multipliers, history, counts, final errors, printed log), single solves
and CPU batches."""
import numpy as np
import pytest

pytest.importorskip("numba")
ca = pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from tests.compiled.test_dispatch import (BANK, _assert_same, _assert_same_answer,  # noqa: E402
                                          _bank_problem, _solve_both, ik)
from tests.solver.test_square_problems import _cases  # noqa: E402

__all__ = ["ik"]      # the fixture (kernels compiled), imported

CASES = {name: (nlp, args) for name, nlp, args in _cases()}


def _problem(name):
    nlp, args = CASES[name]
    bounds = {k: v for k, v in args.items() if k != "x0"}
    return from_casadi(nlp, **bounds), args["x0"]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("opts", [dict(), dict(print_level=5, print_frequency_iter=1),
                                  dict(acceptable_iter=1, acceptable_tol=1e-2,
                                       acceptable_obj_change_tol=1e20),
                                  dict(constr_viol_tol=1e-12, tol=1e-12)])
def test_square_problems_on_the_kernels_are_the_general_paths(ik, name, opts):
    problem, x0 = _problem(name)
    opts = dict(opts)
    pl = opts.pop("print_level", 0)
    _assert_same(*_solve_both(problem, x0, print_level=pl, **opts))


@pytest.mark.parametrize("name", sorted(CASES))
def test_square_problems_from_other_starts(ik, name):
    problem, x0 = _problem(name)
    rng = np.random.default_rng(5)
    for _ in range(4):
        x = np.asarray(x0, float) * (1 + 0.3 * rng.standard_normal(len(x0)))
        (r, log_r), (e, log_e) = _solve_both(problem, x, print_level=0)
        assert r.extra.get("path") == "compiled" or "resumed_at" in r.extra
        _assert_same_answer(r, e)
        assert log_r == log_e


def test_square_bank_problems(ik):
    """The bank's square problems, which the kernels used to leave to the general path."""
    from caspar_backend.compiled.dispatch import is_square

    names = [n for n in sorted(BANK)
             if is_square(*(np.asarray(BANK[n].build()[k], float)
                            for k in ("lbx", "ubx", "lbg", "ubg")))]
    assert names                       # (the bank has some: hs008, ...)
    for name in names:
        problem, d = _bank_problem(name)
        (r, log_r), (e, log_e) = _solve_both(problem, d["x0"], print_level=5,
                                             **dict(BANK[name].options))
        _assert_same_answer(r, e)
        assert log_r == log_e, name


def test_square_batch_on_the_kernel_is_single_solves(ik):
    problem, x0 = _problem("trig")
    rng = np.random.default_rng(9)
    X = np.asarray(x0, float) * (1 + 0.2 * rng.standard_normal((12, 3)))
    r = problem.solve_batch(x0=X, print_level=0)
    assert set(r.path) == {"kernel"}
    for b in range(len(X)):
        s = problem.solve(x0=X[b], print_level=0, compiled_path="no")
        assert (r.status[b], r.iterations[b]) == (s.status, s.iterations), b
        np.testing.assert_array_equal(r.x[b], s.x)
