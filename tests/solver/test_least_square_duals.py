"""``least_square_init_duals = yes`` (IPOPT's DefaultIterateInitializer::
CalculateLeastSquareDuals, solver/initial.py ``least_squares_duals``): every multiplier
from one augmented system with the Hessian zero and the barrier diagonal at minus the
number of bounds -- with the Jacobian at the user's unpushed x0, as IPOPT reads it --
against IPOPT 3.14 (casadi's nlpsol): the starting multipliers IPOPT prints, and status,
iterations and objective on bank problems."""
import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

BANK = {b.name: b for b in bank(include_slow=False)}


def _ipopt_options(bp):
    opts = {k: ("yes" if v is True else "no" if v is False else v)
            for k, v in dict(bp.options).items()}
    return dict(opts, print_level=0, sb="yes", least_square_init_duals="yes")


@pytest.mark.parametrize("name", ["hs016", "hs071", "hs033"])
def test_starting_multipliers_are_ipopts(name):
    """The starting point's multipliers (``max_iter = 0``: the answer is iteration 0)
    equal IPOPT's.  On hs016 IPOPT 3.14 prints yd_new = (-2.8108531817395890,
    0.57365256017622601) in the scaled space (its print_level 9 log); the unpushed x0's
    Jacobian makes the difference (at the pushed x: y = (-2.95, 0.44))."""
    bp = BANK[name]
    d = bp.build()
    nlp = _nlp(d)
    args = {k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg")}
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False,
                                      "ipopt": dict(_ipopt_options(bp), max_iter=0)})
    ref = S(**args)
    P = from_casadi(nlp)
    r = P.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"], ubg=d["ubg"],
                least_square_init_duals=True, max_iter=0, print_level=0,
                **dict(bp.options))
    np.testing.assert_allclose(r.lam_g, np.asarray(ref["lam_g"]).ravel(), rtol=1e-7,
                               atol=1e-9)
    np.testing.assert_allclose(r.lam_x, np.asarray(ref["lam_x"]).ravel(), rtol=1e-7,
                               atol=1e-9)


@pytest.mark.parametrize("name", ["hs005", "hs014", "hs015", "hs016", "hs017", "hs019",
                                  "hs030", "hs032", "hs033", "hs036", "hs037", "hs065",
                                  "hs071", "bound_only_quadratic", "ring_inequalities"])
def test_solves_as_ipopt(name):
    bp = BANK[name]
    d = bp.build()
    nlp = _nlp(d)
    args = {k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg")}
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False, "ipopt": _ipopt_options(bp)})
    ref = S(**args)
    st = S.stats()
    P = from_casadi(nlp)
    for mode in ("no", "yes"):          # the general path; the kernels after iteration 0
        r = P.solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"], ubg=d["ubg"],
                    least_square_init_duals=True, print_level=0, compiled_path=mode,
                    **dict(bp.options))
        assert (r.status, r.iterations) == (st["return_status"], st["iter_count"]), mode
        f = float(ref["f"])
        assert abs(r.f - f) <= 1e-7 * max(1.0, abs(f)), (mode, r.f, f)
