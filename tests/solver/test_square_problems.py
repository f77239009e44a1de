"""Square problems (as many free variables as equality constraints): IPOPT recomputes the
multipliers after every accepted step once the iterate is feasible -- bound multipliers
zero, least-squares y -- and stops as soon as that point passes its termination test
(IpIpoptAlg's ComputeFeasibilityMultipliers), so it needs the iterations of Newton's
method on c(x) = 0 rather than those of driving mu down.  caspar's general path does the
same; the compiled path and the batch paths hand square problems to it.  Each case
against IPOPT (casadi's nlpsol): status, iterations, x and the multipliers."""
import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.casadi import nlpsol  # noqa: E402
from caspar_backend.compiled.dispatch import is_square  # noqa: E402


def _cases():
    x = ca.SX.sym("x", 2)
    yield ("quadratic", {"x": x, "f": x[0] ** 2,
                         "g": ca.vertcat(x[0] ** 2 + x[1] - 3, x[0] - x[1] + 1)},
           dict(x0=[0.5, 0.5], lbx=-100, ubx=100, lbg=0, ubg=0))
    z = ca.SX.sym("z", 3)
    yield ("trig", {"x": z, "f": ca.sumsqr(z - 1),
                    "g": ca.vertcat(z[0] ** 2 + z[1] - 2, z[1] + ca.sin(z[2]) - 1.5,
                                    z[0] + z[1] + z[2] - 3.5)},
           dict(x0=[0.5, 1.0, 1.5], lbx=[-10, 0.01, -10], ubx=10, lbg=0, ubg=0))
    # two equalities and an inequality over two free variables and a fixed one
    w = ca.SX.sym("w", 3)
    yield ("fixed_and_inequality", {"x": w, "f": ca.sumsqr(w),
                                    "g": ca.vertcat(w[0] + w[1] * w[2] - 2,
                                                    w[0] * w[1] - 0.5, w[0] - w[1])},
           dict(x0=[1.0, 0.4, 1.0], lbx=[-5, -5, 1], ubx=[5, 5, 1], lbg=[0, 0, -10],
                ubg=[0, 0, 10]))


@pytest.mark.parametrize("case", list(_cases()), ids=lambda c: c[0])
def test_square_problem_as_ipopt(case):
    name, nlp, args = case
    opts = {"print_time": False}
    ref = ca.nlpsol("R", "ipopt", nlp, {**opts, "ipopt": {"print_level": 0, "sb": "yes"}})
    S = nlpsol("S", "caspar", nlp, {**opts, "caspar": {"print_level": 0}})
    want, got = ref(**args), S(**args)
    sr, ss = ref.stats(), S.stats()
    assert (ss["return_status"], ss["iter_count"]) == (sr["return_status"], sr["iter_count"])
    for k in ("x", "lam_g", "lam_x"):
        np.testing.assert_allclose(np.array(got[k]), np.array(want[k]), rtol=1e-6,
                                   atol=1e-8, err_msg=k)


def test_square_rule():
    inf = np.inf
    assert is_square(np.zeros(2), np.ones(2), np.zeros(2), np.zeros(2))
    assert not is_square(np.zeros(2), np.ones(2), np.zeros(1), np.zeros(1))
    # a fixed variable is not free; inequality rows do not count
    assert is_square(np.zeros(3), np.r_[1.0, 1.0, 0.0], np.zeros(3), np.r_[0.0, 0.0, inf])
    assert not is_square(np.zeros(2), np.ones(2), np.zeros(0), np.zeros(0))


def test_bounds_beyond_1e19_are_infinite():
    """IPOPT's nlp_lower_bound_inf / nlp_upper_bound_inf (-1e19, 1e19): a bound at or
    beyond them is no bound -- the iterations are those of an infinite bound, as
    IPOPT's, on every path (general, compiled, batch)."""
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": (x[0] - 3) ** 2 + x[1] ** 2,
           "g": ca.vertcat(x[0] * x[1] - 1, x[0] ** 2 + x[1] ** 2 - 1)}
    base = dict(x0=[2.0, 0.4], lbx=-10, ubx=10, lbg=[-1, 0])
    opts = {"print_time": False}
    iters = {}
    for ub in (np.inf, 1e19, 1e20, 1e18):
        ref = ca.nlpsol("R", "ipopt", nlp, {**opts, "ipopt": {"print_level": 0, "sb": "yes"}})
        ref(**base, ubg=[-1, ub])
        for path in ("no", "yes"):
            S = nlpsol("S", "caspar", nlp, {**opts, "caspar": {"print_level": 0,
                                                               "compiled_path": path}})
            S(**base, ubg=[-1, ub])
            assert S.stats()["iter_count"] == ref.stats()["iter_count"], (ub, path)
        iters[ub] = ref.stats()["iter_count"]
    assert iters[1e19] == iters[1e20] == iters[np.inf] != iters[1e18]
    # a lower bound -1e20 likewise, and the option moves the threshold
    S = nlpsol("S", "caspar", nlp, {**opts, "caspar": {"print_level": 0}})
    S(**{**base, "lbg": [-1, -1e20]}, ubg=[-1, 1e20])
    ref = ca.nlpsol("R", "ipopt", nlp, {**opts, "ipopt": {"print_level": 0, "sb": "yes"}})
    ref(**{**base, "lbg": [-1, -1e20]}, ubg=[-1, 1e20])
    assert S.stats()["iter_count"] == ref.stats()["iter_count"]
    S = nlpsol("S", "caspar", nlp, {**opts, "caspar": {"print_level": 0,
                                                       "nlp_upper_bound_inf": 1e21}})
    S(**base, ubg=[-1, 1e20])
    assert S.stats()["iter_count"] != iters[1e20]
    # the batch path reads the same bounds
    from caspar_backend import from_casadi

    P = from_casadi(nlp)
    r = P.solve_batch(x0=np.array([[2.0, 0.4]] * 2), lbx=-10, ubx=10, lbg=[-1, 0],
                      ubg=np.array([[-1, 1e19], [-1, np.inf]]), print_level=0)
    assert list(r.iterations) == [iters[1e19]] * 2


def _trig():
    return next(c for c in _cases() if c[0] == "trig")


@pytest.mark.parametrize("path", ["no", "auto"])
@pytest.mark.parametrize("options, iterations", [
    ({}, 14), ({"required_infeasibility_reduction": 0.9}, 9), ({"tol": 1e-5}, 13)],
    ids=["default", "user_kappa", "tol"])
def test_square_restoration_stays_until_solved(path, options, iterations, capfd):
    """A square problem's restoration phase is not left before the equations hold
    (IPOPT's MinC_1NrmRestorationPhase: required_infeasibility_reduction 0 unless the
    user set it; RestoConvergenceCheck returns at max-norm infeasibility <= min(tol,
    constr_viol_tol) without the filter tests): from this start IPOPT finishes in the
    phase (14 iterations, 5r to 14r) where the usual return would leave it at 6r and
    finish in 9.  Status, iterations, the printed lines' labels, x and the multipliers
    as IPOPT, on the general and the compiled path; a user's
    required_infeasibility_reduction is kept (9 iterations, as IPOPT's)."""
    _, nlp, args = _trig()
    args = dict(args, x0=[-1.129, 1.315, 0.2889])
    ref = ca.nlpsol("R", "ipopt", nlp, {"print_time": False, "ipopt": {
        "print_level": 5, "sb": "yes", **options}})
    want = ref(**args)
    ipopt_log = capfd.readouterr().out
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
        "print_level": 5, "compiled_path": path, **options}})
    got = S(**args)
    caspar_log = capfd.readouterr().out
    sr, ss = ref.stats(), S.stats()
    assert (ss["return_status"], ss["iter_count"]) == (sr["return_status"],
                                                       sr["iter_count"])
    assert sr["iter_count"] == iterations

    def labels(text):
        return [w.split()[0] for w in text.splitlines()
                if w[:5].strip().rstrip("r").isdigit() and len(w.split()) >= 9]

    assert labels(caspar_log) == labels(ipopt_log)
    for k in ("x", "lam_g", "lam_x"):
        np.testing.assert_allclose(np.array(got[k]), np.array(want[k]), rtol=1e-6,
                                   atol=1e-8, err_msg=k)


@pytest.mark.parametrize("path", ["no", "auto"])
def test_square_feasible_point_found(path):
    """x0^2 + 1e-5 = 0, x0 - x1 = 0 has no solution; its least violation 1e-5 is within
    constr_viol_tol.  IPOPT's restoration problem converges there, and a square
    problem's restoration that converges at a point within constr_viol_tol ends the
    solve: Feasible_Point_Found (a success for casadi), the bound multipliers zero and
    the least-squares y (ComputeFeasibilityMultipliersPostprocess).  Status, x and the
    multipliers as IPOPT; the iterations are not compared: the Jacobian 2 x0 vanishes
    at the answer, and the two solvers' restoration steps part in the fourth digit
    (29 against IPOPT's 31)."""
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(x[0] ** 2 + 1e-5, x[0] - x[1])}
    args = dict(x0=[1.0, 0.5], lbg=0, ubg=0)
    ref = ca.nlpsol("R", "ipopt", nlp, {"print_time": False, "ipopt": {
        "print_level": 0, "sb": "yes"}})
    S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
        "print_level": 0, "compiled_path": path}})
    want, got = ref(**args), S(**args)
    sr, ss = ref.stats(), S.stats()
    assert ss["return_status"] == sr["return_status"] == "Feasible_Point_Found"
    assert ss["success"] and sr["success"]
    for k in ("x", "lam_g", "lam_x"):
        np.testing.assert_allclose(np.array(got[k]), np.array(want[k]), rtol=1e-6,
                                   atol=1e-8, err_msg=k)
