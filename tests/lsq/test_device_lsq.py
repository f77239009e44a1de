"""Least squares on the GPU (``device='cuda'``): the dense-W Schur step against the same
algebra on NumPy and the CPU's full step, and whole solves against the CPU's (same
termination and iterations, costs to 1e-9).  Run on the GPU machine (``pytest -m gpu``)."""

import numpy as np
import pytest

from caspar_backend.errors import OptionError
from caspar_backend.lsq.device_schur import DeviceDenseSchur
from caspar_backend.lsq.jacobian import SparseJacobian
from caspar_backend.lsq.linear_solvers import DenseNormalCholesky
from caspar_backend.lsq.structure import detect_schur_structure

from .bal import bal_problem

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def bal():
    return bal_problem(8, 60, 4)[0]


def _system_near_start(bal, seed):
    """``(pattern, Schur structure, J values, r, d)`` at a random point near the start
    and a random LM diagonal."""
    pat = bal.reduced_pattern()
    rng = np.random.default_rng(seed)
    x = bal.x0 + 0.01 * rng.standard_normal(bal.n)
    ev = bal.evaluator()
    vals = np.asarray(ev.jac_values(x))[pat.keep]
    r = np.asarray(ev.cons(x)).copy()
    return pat, detect_schur_structure(pat), vals, r, rng.uniform(0.01, 1.0, pat.n)


def test_device_step_equals_host_algebra_and_full_step(bal):
    import cupy as cp

    pat, st, vals, r, d = _system_near_start(bal, 3)
    jac = SparseJacobian(pat)
    full = DenseNormalCholesky(jac).solve(vals, r, d)
    host = DeviceDenseSchur(jac, st, np).solve(vals, r, d)
    from caspar_backend.lsq.device_pattern import DevicePattern

    dp = DevicePattern(bal.evaluator("cuda"), bal.lbx, bal.ubx, bal.m, cp)
    dev = DeviceDenseSchur(dp, st, cp).solve(cp.asarray(vals), cp.asarray(r), cp.asarray(d))
    np.testing.assert_allclose(dev.get(), host, rtol=1e-9, atol=1e-12 * np.abs(host).max())
    np.testing.assert_allclose(dev.get(), full, rtol=1e-7, atol=1e-9 * np.abs(full).max())


@pytest.mark.parametrize("bounds,ordered", [(False, False), (True, False), (False, True)])
def test_device_solve_equals_cpu_solve(bal, bounds, ordered):
    kw = {}
    if ordered:
        # the points eliminated, given as Ceres' ordering: the split built on the device
        kw["linear_solver_ordering"] = [72 + 3 * np.arange(60)[:, None] + np.arange(3),
                                        9 * np.arange(8)[:, None] + np.arange(9)]
    if bounds:
        # box the free cameras' first parameter near its start: some steps are projected
        lbx, ubx = bal.lbx.copy(), bal.ubx.copy()
        lbx[9:9 * 8:9] = bal.x0[9:9 * 8:9] - 1e-3
        ubx[9:9 * 8:9] = bal.x0[9:9 * 8:9] + 1e-3
        kw.update(lbx=lbx, ubx=ubx)
    cpu = bal.solve(**kw)
    gpu = bal.solve(device="cuda", **kw)
    assert gpu.termination_type == cpu.termination_type == "CONVERGENCE"
    assert gpu.num_iterations == cpu.num_iterations
    assert gpu.linear_solver_type == "DENSE_SCHUR"
    assert gpu.final_cost == pytest.approx(cpu.final_cost, rel=1e-9)
    assert isinstance(gpu.x, np.ndarray)
    np.testing.assert_allclose(gpu.x, cpu.x, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("which", ["Huber", "Cauchy", "SoftL1", "user"])
def test_device_robust_losses_equal_cpu(which):
    """Ceres' losses evaluate on the device, a user's NumPy loss on the host; the
    corrected residuals and Jacobian give the CPU's solve."""
    from caspar_backend.lsq import losses

    if which == "user":
        class SteeperThanSquares(losses.LossFunction):
            """rho(s) = s + s^2 / (2 a^2): NumPy only, and with rho'' > 0 (the rank-one
            correction of the Jacobian runs too)."""

            positive_curvature = True

            def rho(self, s):
                assert isinstance(s, np.ndarray)
                c = 0.5 / self.b
                return s + c * s * s, 1.0 + 2.0 * c * s, np.full_like(s, 2.0 * c)

        loss = SteeperThanSquares(20.0)
    else:
        loss = getattr(losses, which)(2.0)
    prob = bal_problem(8, 60, 4, loss=loss)[0]
    cpu = prob.solve()
    gpu = prob.solve(device="cuda")
    assert gpu.termination_type == cpu.termination_type
    assert gpu.num_iterations == cpu.num_iterations
    assert gpu.final_cost == pytest.approx(cpu.final_cost, rel=1e-9)
    np.testing.assert_allclose(gpu.x, cpu.x, rtol=1e-6, atol=1e-8)


def test_device_options_that_run_on_the_cpu_only(bal):
    with pytest.raises(OptionError, match="SPARSE_NORMAL_CHOLESKY runs on the CPU only"):
        bal.solve(device="cuda", linear_solver_type="SPARSE_NORMAL_CHOLESKY")


def test_bundle_adjustment_on_the_gpu_matches_the_cpu():
    pytest.importorskip("pycolmap")
    from benchmarks.models.colmap_scene import gauge_images, synthetic_reconstruction
    from caspar_backend.lsq.colmap import BundleAdjustmentProblem

    rec = synthetic_reconstruction(12, 600, 5, seed=2)
    ba = BundleAdjustmentProblem.from_reconstruction(rec, constant_intrinsics=True,
                                                     constant_images=gauge_images(rec))
    cpu, gpu = ba.solve(), ba.solve(device="cuda")
    assert gpu.termination_type == cpu.termination_type
    assert gpu.num_iterations == cpu.num_iterations
    assert gpu.final_cost == pytest.approx(cpu.final_cost, rel=1e-9)


def test_device_iterative_schur_step_equals_host_algebra(bal):
    """ITERATIVE_SCHUR on the device (cuSPARSE products, batched inverses) against the
    same algebra on NumPy: the same CG iterations and step."""
    import cupy as cp

    from caspar_backend.lsq.device_iterative_schur import DeviceIterativeSchur
    from caspar_backend.lsq.device_pattern import DevicePattern

    pat, st, vals, r, d = _system_near_start(bal, 5)
    full = DenseNormalCholesky(SparseJacobian(pat)).solve(vals, r, d)
    dp = DevicePattern(bal.evaluator("cuda"), bal.lbx, bal.ubx, bal.m, cp)
    for eta in (0.1, 1e-12):
        host = DeviceIterativeSchur(SparseJacobian(pat), st, np, eta=eta, max_iterations=1000)
        ref = host.solve(vals, r, d)
        dev = DeviceIterativeSchur(dp, st, cp, eta=eta, max_iterations=1000)
        step = dev.solve(cp.asarray(vals), cp.asarray(r), cp.asarray(d)).get()
        if eta == 0.1:      # Ceres' eta: CG stops far from rounding, so the same count
            assert dev.last_iterations == host.last_iterations
            np.testing.assert_allclose(step, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max())
        else:               # converged: the full system's step
            np.testing.assert_allclose(step, full, rtol=1e-6, atol=1e-7 * np.abs(full).max())


def test_device_iterative_schur_solve_equals_cpu(bal):
    """A whole solve by ITERATIVE_SCHUR on the GPU against the CPU's ITERATIVE_SCHUR
    (Ceres' eta: inexact steps) and against the direct solve's optimum."""
    tight = dict(function_tolerance=1e-10, gradient_tolerance=1e-12, parameter_tolerance=1e-12,
                 max_num_iterations=200)
    cpu = bal.solve(linear_solver_type="ITERATIVE_SCHUR", **tight)
    gpu = bal.solve(device="cuda", linear_solver_type="ITERATIVE_SCHUR", **tight)
    direct = bal.solve(**tight)
    assert gpu.linear_solver_type == "ITERATIVE_SCHUR"
    assert gpu.termination_type == cpu.termination_type == "CONVERGENCE"
    assert gpu.num_iterations == cpu.num_iterations
    assert gpu.final_cost == pytest.approx(cpu.final_cost, rel=1e-9)
    assert gpu.final_cost == pytest.approx(direct.final_cost, rel=1e-8)


def test_large_scene_choice_runs_iterative_schur_on_the_gpu(monkeypatch):
    """Past the dense product's budget the GPU solves by ITERATIVE_SCHUR run to the direct
    step: the CPU's direct solve's iterations and optimum (a COLMAP scene; the budget
    lowered to reach the switch at a test's size)."""
    pytest.importorskip("pycolmap")
    from benchmarks.models.colmap_scene import gauge_images, synthetic_reconstruction
    from caspar_backend.lsq import device_schur
    from caspar_backend.lsq.colmap import BundleAdjustmentProblem

    monkeypatch.setattr(device_schur, "DENSE_FLOPS_MAX", 0.0)
    rec = synthetic_reconstruction(20, 800, 4, seed=3)
    ba = BundleAdjustmentProblem.from_reconstruction(rec, constant_intrinsics=True,
                                                     constant_images=gauge_images(rec))
    cpu, gpu = ba.solve(), ba.solve(device="cuda")
    assert gpu.linear_solver_type == "ITERATIVE_SCHUR"
    assert gpu.termination_type == cpu.termination_type == "CONVERGENCE"
    assert gpu.num_iterations == cpu.num_iterations
    assert gpu.final_cost == pytest.approx(cpu.final_cost, rel=1e-9)
