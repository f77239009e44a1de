"""IPOPT's perturbation handler (solver/perturbation.py, compiled/kernels/perturbation.py):
the degeneracy test's transitions as IPOPT's PDPerturbationHandler makes them, and what
it is for -- models whose KKT matrix is singular at the start take IPOPT's iterations
(delta_c is dropped again once a matrix needs nothing), on both paths."""

from __future__ import annotations

import pytest

from caspar_backend.solver.perturbation import (CLEAR_C, DEGEN_ITERS_MAX, DEGENERATE,
                                                KEEP_C, NO_TEST, NOT_DEGENERATE,
                                                NOT_YET_DETERMINED, SET_C, TEST_C,
                                                TEST_CW, TEST_NONE, TEST_W,
                                                DegeneracyTest)


def test_a_first_matrix_that_needs_nothing_decides_both():
    t = DegeneracyTest()
    assert t.new_system() == (False, False) and t.test == TEST_NONE
    assert t.new_system() == (False, False)
    assert (t.hess, t.jac, t.test) == (NOT_DEGENERATE, NOT_DEGENERATE, NO_TEST)
    # decided: a singular matrix gets delta_c for itself, then delta_w
    assert t.singular(False) == (SET_C, False)
    assert t.singular(True) == (KEEP_C, True)
    assert t.new_system() == (False, False)


def test_a_wrong_inertia_decides_both():
    t = DegeneracyTest()
    t.new_system()
    t.wrong_inertia()
    assert (t.hess, t.jac) == (NOT_DEGENERATE, NOT_DEGENERATE)


def test_the_test_sequence_of_a_singular_matrix():
    """delta_c first; still singular: delta_w instead; then both."""
    t = DegeneracyTest()
    t.new_system()
    assert t.singular(False) == (SET_C, False) and t.test == TEST_C
    assert t.singular(True) == (CLEAR_C, True) and t.test == TEST_W
    assert t.singular(False) == (SET_C, True) and t.test == TEST_CW
    assert t.singular(True) == (KEEP_C, True)


def test_three_iterations_that_need_delta_c_make_the_jacobian_degenerate():
    t = DegeneracyTest()
    for k in range(DEGEN_ITERS_MAX):
        assert t.new_system() == (False, False)
        assert t.singular(False) == (SET_C, False)      # and the matrix factorizes
    with_c, with_w = t.new_system()
    assert (t.hess, t.jac) == (NOT_DEGENERATE, DEGENERATE)
    assert with_c and not with_w and t.test == NO_TEST


def test_exhausted_delta_w_reopens_a_degenerate_hessian():
    t = DegeneracyTest()
    t.hess, t.jac = DEGENERATE, NOT_DEGENERATE
    assert t.new_system() == (False, True)
    t.delta_w_exhausted()
    assert t.hess == NOT_YET_DETERMINED and t.test == NO_TEST


def test_always_cd_starts_with_delta_c():
    t = DegeneracyTest(always_cd=True)
    assert t.jac == NOT_DEGENERATE
    assert t.new_system() == (True, False) and t.test == TEST_C


@pytest.mark.parametrize("compiled", ["yes", "no"])
def test_casadi_opti_user_guide_example_as_ipopt(compiled):
    """CasADi's user guide's first Opti example (min (y - x^2)^2 s.t. x^2 + y^2 = 1,
    x + y >= 1): its Jacobian is singular at the start (x = y = 0).  IPOPT drops delta_c
    at the next matrix and takes 15 iterations; caspar kept delta_c for the rest of the
    solve and took 24."""
    casadi = pytest.importorskip("casadi")
    from caspar_backend.casadi import Opti

    def run(O, name, opts):
        opti = O()
        x, y = opti.variable(), opti.variable()
        opti.minimize((y - x ** 2) ** 2)
        opti.subject_to(x ** 2 + y ** 2 == 1)
        opti.subject_to(x + y >= 1)
        opti.solver(name, {"print_time": False}, opts)
        sol = opti.solve()
        return sol.stats(), sol.value(x), sol.value(y)

    ref = run(casadi.Opti, "ipopt", {"print_level": 0, "sb": "yes"})
    got = run(Opti, "caspar", {"print_level": 0, "compiled_path": compiled})
    assert got[0]["return_status"] == ref[0]["return_status"] == "Solve_Succeeded"
    assert got[0]["iter_count"] == ref[0]["iter_count"]
    assert abs(got[1] - ref[1]) < 1e-8 and abs(got[2] - ref[2]) < 1e-8


@pytest.mark.parametrize("compiled", ["yes", "no"])
@pytest.mark.parametrize("name", ["hs061", "hs013"])
def test_singular_starts_take_ipopts_iterations(name, compiled):
    """hs061 (J = [[3, 0, 0], [4, 0, 0]] at x0 = 0) and hs013 (degenerate at its
    optimum): 10 and 49 iterations with delta_c kept for the rest of the solve, IPOPT's 9
    and 55 now."""
    pytest.importorskip("casadi")
    from tests.solver.test_hs_extra import PROBLEMS
    from tests.support.solver_harness import run_caspar, run_ipopt

    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    ri, rc = run_ipopt(d), run_caspar(d, {"compiled_path": compiled})
    assert rc.status == ri["status"] == "Solve_Succeeded"
    assert rc.iterations == ri["iter"]
    assert abs(rc.f - ri["f"]) <= 1e-8 * max(1.0, abs(ri["f"]))
