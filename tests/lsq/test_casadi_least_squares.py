"""The CasADi front door of least squares: SX residuals against IPOPT on the same sum
of squares, and a Function.map bundle adjustment against the direct ResidualBlock one."""

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from benchmarks.models.bundle import N_CAM_PARAMS, observation_functions  # noqa: E402
from caspar_backend.casadi import least_squares  # noqa: E402
from caspar_backend.errors import ModelError  # noqa: E402
from caspar_backend.lsq import Huber  # noqa: E402

from .bal import bal_problem  # noqa: E402


def test_sx_fit_matches_ipopt():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 3, 50)
    y = 1.5 * np.sin(2.0 * t + 0.3) + 0.05 * rng.standard_normal(50)
    x = ca.SX.sym("x", 3)
    tp = ca.SX.sym("t", 50)
    yp = ca.SX.sym("y", 50)
    r = x[0] * ca.sin(x[1] * tp + x[2]) - yp
    prob = least_squares({"x": x, "p": ca.vertcat(tp, yp), "r": r})
    s = prob.solve(x0=[1.0, 1.8, 0.0], p=np.r_[t, y], function_tolerance=1e-14,
                   gradient_tolerance=1e-12, parameter_tolerance=1e-14)
    ipopt = ca.nlpsol("ip", "ipopt", {"x": x, "p": ca.vertcat(tp, yp), "f": 0.5 * ca.sumsqr(r)},
                      {"print_time": False, "ipopt": {"print_level": 0, "tol": 1e-12}})
    ref = ipopt(x0=[1.0, 1.8, 0.0], p=np.r_[t, y])
    assert s.termination_type == "CONVERGENCE"
    assert s.final_cost == pytest.approx(float(ref["f"]), rel=1e-9)
    np.testing.assert_allclose(s.x, np.array(ref["x"]).ravel(), rtol=1e-6)


def test_mapped_bundle_adjustment_finds_schur_structure():
    direct, scene = bal_problem(8, 60, 4)
    nc, npt = 8, 60
    n_obs = scene["cam_idx"].size
    residual, _ = observation_functions()
    C = ca.MX.sym("C", N_CAM_PARAMS, nc)
    X = ca.MX.sym("X", 3, npt)
    U = ca.MX.sym("U", 2, n_obs)
    r = residual.map(n_obs)(C[:, scene["cam_idx"].tolist()], X[:, scene["pt_idx"].tolist()], U)
    prob = least_squares({"x": ca.veccat(C, X), "p": ca.vec(U), "r": r}, residual_block_size=2,
                         x0=direct.x0, lbx=direct.lbx, ubx=direct.ubx,
                         p=scene["obs"].ravel(order="F"))
    assert len(prob.compiled.constraint_groups) == 2          # one template per component
    s = prob.solve()
    ref = direct.solve()
    assert s.linear_solver_type == "DENSE_SCHUR" and s.num_eliminated_blocks == npt
    assert s.num_iterations == ref.num_iterations
    assert s.final_cost == pytest.approx(ref.final_cost, rel=1e-10)


def test_robust_loss_blocks_and_errors():
    x = ca.SX.sym("x", 2)
    r = ca.vertcat(x[0] - 1, x[1] - 2, x[0] + x[1] - 10)
    prob = least_squares({"x": x, "r": r}, loss=Huber(0.5))
    s = prob.solve(x0=[0.0, 0.0], function_tolerance=1e-14, gradient_tolerance=1e-14,
                   parameter_tolerance=1e-14, max_num_iterations=200)
    # Huber: the outlying third residual pulls with a bounded force 0.5
    plain = least_squares({"x": x, "r": r}).solve(x0=[0.0, 0.0])
    assert abs(s.x[0] - 1) < abs(plain.x[0] - 1)
    with pytest.raises(ModelError, match="residual_block_size"):
        least_squares({"x": x, "r": r}, residual_block_size=2)
    with pytest.raises(ModelError, match="unknown key"):
        least_squares({"x": x, "r": r, "f": x[0]})
