"""The lockstep interior point against single solves: every instance of a batch ends with
the status, the iteration count and (to 1e-8 relative) the objective of its own
``Problem.solve`` with the same inputs and options -- on the IK problem, problems of the
bank with perturbed starting points, batches mixing infeasible and feasible instances,
several slack structures in one batch, the options that keep every instance on its
own solve, and a long nonconvex run (chained Rosenbrock, ~150 iterations)."""

from __future__ import annotations

import os
import sys
from collections import Counter

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))

from bench_small import ik_problem, ik_targets  # noqa: E402

from caspar_backend.adapters.casadi import from_casadi  # noqa: E402
from caspar_backend.batch import solve as batch_solve  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

X0_IK = [0.1, 0.2, 0.3]


@pytest.fixture(scope="module")
def ik():
    nlp, bounds = ik_problem()
    return from_casadi(nlp, **bounds)


def assert_matches_single(problem, res, rows, iterations_up_to=None, **common):
    """Instance b of ``res`` equals ``problem.solve`` of ``rows[b]`` (dict of inputs);
    ``iterations_up_to``: compare iteration counts only for single solves of at most that
    many iterations (other hardware's rounding: see the GPU test)."""
    for b, row in enumerate(rows):
        s = problem.solve(**row, **common)
        assert res.status[b] == s.status, (b, res.path[b], res.reason[b])
        if iterations_up_to is None or s.iterations <= iterations_up_to:
            assert res.iterations[b] == s.iterations, (b, res.path[b], res.status[b])
        if np.isfinite(s.f):
            assert abs(res.f[b] - s.f) <= 1e-8 * max(1.0, abs(s.f)), (b, res.f[b], s.f)
            np.testing.assert_allclose(res.x[b], s.x, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(res.lam_g[b], s.lam_g, rtol=1e-5, atol=1e-7)


def test_ik_batch_equals_single_solves_and_runs_in_lockstep(ik):
    T = ik_targets(40, seed=3)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0)
    assert len(res) == 40 and res.x.shape == (40, 3) and res.g.shape == (40, 1)
    assert Counter(res.path)["lockstep"] == 40, Counter(res.reason)
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=t) for t in T], print_level=0)
    # the model's current p is left as it was
    np.testing.assert_array_equal(ik.p, ik.model.p)


def test_infeasible_instances_leave_the_batch_and_the_others_converge(ik):
    T = ik_targets(12, seed=4)
    ubg = np.full((12, 1), 2.5)
    ubg[[2, 7]] = -10.0          # q1 + q2 + q3 <= -10 with q_i >= -pi: infeasible
    res = ik.solve_batch(x0=X0_IK, p=T, ubg=ubg, print_level=0)
    assert res.status[2] == res.status[7] == "Infeasible_Problem_Detected"
    assert res.path[2] == res.path[7] == "single" and res.reason[2]
    ok = [b for b in range(12) if b not in (2, 7)]
    assert all(res.path[b] == "lockstep" and res.status[b] == "Solve_Succeeded" for b in ok)
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=T[b], ubg=ubg[b]) for b in range(12)],
                          print_level=0)


def test_instances_with_different_fixed_variables_run_as_separate_groups(ik):
    T = ik_targets(6, seed=5)
    lbx = np.tile([-np.pi] * 3, (6, 1))
    ubx = np.tile([np.pi] * 3, (6, 1))
    lbx[3:, 2] = ubx[3:, 2] = 0.2       # the third joint fixed in the last three
    res = ik.solve_batch(x0=X0_IK, p=T, lbx=lbx, ubx=ubx, print_level=0)
    assert set(res.path) == {"lockstep"}
    assert np.all(res.x[3:, 2] == 0.2)
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=T[b], lbx=lbx[b], ubx=ubx[b])
                                    for b in range(6)], print_level=0)


def test_an_option_the_lockstep_path_lacks_solves_each_instance_alone(ik):
    T = ik_targets(3, seed=6)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0, mu_strategy="adaptive")
    assert set(res.path) == {"single"} and "mu_strategy" in res.reason[0]
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=t) for t in T], print_level=0,
                          mu_strategy="adaptive")


_BANK = [p for p in bank(include_slow=False)]


@pytest.mark.parametrize("bp", _BANK[::3], ids=lambda p: p.name)
def test_bank_problem_with_perturbed_starts_equals_single_solves(bp):
    d = bp.build()
    problem = from_casadi(_nlp(d))
    rng = np.random.default_rng(len(bp.name))
    x0 = np.asarray(d["x0"], float)
    X0 = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                          for _ in range(2)])
    opts = dict(bp.options, print_level=0)
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    res = problem.solve_batch(x0=X0, **bounds, **opts)
    assert_matches_single(problem, res, [dict(x0=X0[b], **bounds) for b in range(3)], **opts)


def test_a_long_nonconvex_run_takes_each_single_solves_iterations():
    # chained Rosenbrock (n = 100) from 8 perturbed starts: ~150 iterations with inertia
    # corrections each.  Rounding differences between the batched factorization and
    # the single path's QDLDL changed some instances' counts by one; with the batched
    # factorization QDLDL's bit for bit (batch/ldl_symbolic.py) every count is equal
    bp = next(p for p in bank(include_slow=False) if p.name == "chained_rosenbrock_100")
    d = bp.build()
    problem = from_casadi(_nlp(d))
    x0 = np.asarray(d["x0"], float)
    X0 = x0 * (1 + 0.05 * np.random.default_rng(0).standard_normal((8, x0.size)))
    res = problem.solve_batch(X0, print_level=0)
    assert set(res.path) == {"lockstep"}
    assert_matches_single(problem, res, [dict(x0=X0[b]) for b in range(8)], print_level=0)


@pytest.mark.gpu
@pytest.mark.parametrize("tail", [0, None], ids=["all-on-gpu", "tail-on-host"])
def test_cuda_batch_equals_cpu_single_solves(ik, tail, monkeypatch):
    from caspar_backend.batch.ipm import LockstepIPM

    if tail is None:            # the default: the tail of the run moves to the host
        tail = LockstepIPM.HOST_TAIL_WORK
    monkeypatch.setattr(LockstepIPM, "HOST_TAIL_WORK", tail)
    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", False)     # the lockstep CuPy path
    T = ik_targets(48, seed=7)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0, device="cuda")
    assert Counter(res.path)["lockstep"] == 48, Counter(res.reason)
    assert set(res.extra["device"]) == {"cuda"}     # (the run's device, its tail included)
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=t) for t in T], print_level=0)


@pytest.mark.gpu
@pytest.mark.parametrize("bp", _BANK[1::6], ids=lambda p: p.name)
def test_cuda_bank_batch_equals_cpu_single_solves(bp, monkeypatch):
    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", False)     # the lockstep CuPy path
    d = bp.build()
    problem = from_casadi(_nlp(d))
    rng = np.random.default_rng(len(bp.name) + 1)
    x0 = np.asarray(d["x0"], float)
    X0 = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                          for _ in range(2)])
    opts = dict(bp.options, print_level=0)
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    res = problem.solve_batch(x0=X0, **bounds, **opts, device="cuda")
    # the generated GPU kernels round differently from NumPy (fused multiply-adds): a
    # run of ~1,500 iterations (chained Rosenbrock, n = 1,000) amplifies that to a few
    # iterations more or less, with the same status and objective
    assert_matches_single(problem, res, [dict(x0=X0[b], **bounds) for b in range(3)],
                          iterations_up_to=500, **opts)


def test_impossible_inertia_leaves_the_batch_for_the_pivoting_switch(ik, monkeypatch):
    """An instance whose unpivoted factorization reports fewer negative eigenvalues than
    its negative constraint block forces leaves the batch, as the single path switches to
    its pivoting mode there (solver/inertia.py); the others stay.  One such report is made
    up (instance 1, the first right inertia Algorithm IC meets; the small-K mode off so
    that the batch factorizes without pivoting); every instance ends as its single
    solve."""
    import caspar_backend.batch.ldl as bldl

    monkeypatch.setattr("caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N", 0)
    calls = {"n": 0, "done": False}
    factorize = bldl.BatchLDL.factorize

    def one_wrong(self, values, active=None):
        # the first factorization after the multipliers' (call 1) whose inertia is right
        # for instance 1 (m = 1 negative eigenvalue) reports none
        n_pos, n_neg, n_zero = factorize(self, values, active)
        calls["n"] += 1
        if calls["n"] > 1 and not calls["done"] and not self.pivots and n_neg[1] == 1 \
                and n_zero[1] == 0:
            calls["done"] = True
            n_pos, n_neg = n_pos.copy(), n_neg.copy()
            n_pos[1] += 1
            n_neg[1] -= 1
        return n_pos, n_neg, n_zero

    monkeypatch.setattr(bldl.BatchLDL, "factorize", one_wrong)
    T = ik_targets(6, seed=11)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0)
    assert res.path[1] == "single", (res.path, res.reason)
    assert res.reason[1] == "pivoting switch of the inertia correction"
    assert all(res.path[b] == "lockstep" for b in (0, 2, 3, 4, 5)), res.reason
    monkeypatch.setattr(bldl.BatchLDL, "factorize", factorize)
    assert_matches_single(ik, res, [dict(x0=X0_IK, p=t) for t in T], print_level=0)
