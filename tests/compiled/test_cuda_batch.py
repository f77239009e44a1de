"""The CUDA batch kernel (caspar_backend.compiled.cuda, solve_batch on device='cuda')
against single CPU solves: each instance the kernel finishes has its own Problem.solve's
status and iterations and its objective to 1e-8 relative (libdevice and FMA
contraction round differently from the CPU: agreement to rounding, not bits); an
instance the kernel ejects (here: infeasible, which needs the restoration phase) is
solved by its own solve and ends as that solve does.

The kernel compiles on the first launch (minutes of NVVM; then numba-cuda's disk cache):
the tests share one process's compiled kernel.
"""
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("numba_cuda")
pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

pytestmark = pytest.mark.gpu

X0 = np.array([0.1, 0.2, 0.3])


@pytest.fixture(autouse=True)
def kernel_on_cuda(monkeypatch):
    """These tests are the kernel's (whatever solve_batch's default GPU path)."""
    from caspar_backend.batch import solve as batch_solve

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", True)


@pytest.fixture(scope="module")
def ik():
    nlp, bounds = arm_ik()
    return from_casadi(nlp, **bounds)


def _assert_matches_cpu(problem, res, rows, **options):
    for b, row in enumerate(rows):
        s = problem.solve(**row, **options)
        where = (b, res.path[b], res.reason[b])
        assert res.status[b] == s.status, where
        if res.path[b] == "kernel":   # (an ejected instance's own solve ran on the GPU)
            assert res.iterations[b] == s.iterations, where
        if np.isfinite(s.f):
            assert abs(res.f[b] - s.f) <= 1e-8 * max(1.0, abs(s.f)), (where, res.f[b], s.f)
            np.testing.assert_allclose(res.x[b], s.x, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(res.g[b], s.g, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(res.lam_g[b], s.lam_g, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(res.lam_x[b], s.lam_x, rtol=1e-5, atol=1e-7)


def test_ik_kernel_batch_with_infeasible_instances_equals_cpu_single_solves(ik):
    B = 64
    T = arm_targets(B, seed=11)
    ubg = np.full((B, 1), 2.5)
    ubg[[5, 40]] = -10.0          # q1 + q2 + q3 <= -10 with q_i >= -pi: infeasible
    res = ik.solve_batch(x0=X0, p=T, ubg=ubg, print_level=0, device="cuda")
    paths = Counter(res.path)
    assert paths["kernel"] == B - 2, (paths, Counter(res.reason))
    assert res.path[5] == res.path[40] == "single" and res.reason[5].startswith("kernel: ")
    assert res.status[5] == res.status[40] == "Infeasible_Problem_Detected"
    _assert_matches_cpu(ik, res, [dict(x0=X0, p=T[b], ubg=ubg[b]) for b in range(B)],
                        print_level=0)


def test_ik_kernel_batch_of_one_and_odd_sizes(ik):
    for B in (1, 65):
        T = arm_targets(B, seed=B)
        res = ik.solve_batch(x0=X0, p=T, print_level=0, device="cuda")
        assert set(res.path) == {"kernel"} and set(res.extra["device"]) == {"cuda"}
        _assert_matches_cpu(ik, res, [dict(x0=X0, p=t) for t in T], print_level=0)


# unconstrained, equality, inequality, bounds, n = 401 (those the compiled path finishes)
BANK_NAMES = ("hs001", "hs006", "hs015", "hs071", "maratos", "optimal_control_200")


@pytest.mark.parametrize("name", BANK_NAMES)
def test_bank_kernel_batch_equals_cpu_single_solves(name):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    d = bp.build()
    problem = from_casadi(_nlp(d))
    rng = np.random.default_rng(len(name))
    x0 = np.asarray(d["x0"], float)
    X = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                         for _ in range(3)])
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    opts = dict(bp.options, print_level=0)
    res = problem.solve_batch(x0=X, **bounds, **opts, device="cuda")
    assert "kernel" in res.path, Counter(res.reason)
    _assert_matches_cpu(problem, res, [dict(x0=X[b], **bounds) for b in range(len(X))],
                        **opts)


def test_ik_kernel_batch_warm_starts(ik):
    """IPOPT's warm start in the CUDA kernel (kernels/start.py): each instance from the
    previous batch's answers and multipliers, as its CPU single solve."""
    first = ik.solve_batch(x0=X0, p=arm_targets(64, seed=21), print_level=0, device="cuda")
    T = arm_targets(64, seed=22)
    kw = dict(warm_start_init_point=True, warm_start_bound_push=1e-6,
              warm_start_mult_bound_push=1e-6, print_level=0)
    res = ik.solve_batch(x0=first.x, p=T, lam_g0=first.lam_g, lam_x0=first.lam_x,
                         device="cuda", **kw)
    assert set(res.path) == {"kernel"} and set(res.extra["device"]) == {"cuda"}
    _assert_matches_cpu(ik, res, [dict(x0=first.x[b], p=T[b], lam_g0=first.lam_g[b],
                                       lam_x0=first.lam_x[b]) for b in range(64)], **kw)


def test_square_kernel_batch_equals_cpu_single_solves():
    """A square system (IPOPT's feasibility multipliers in the kernel,
    kernels/termination.py) from perturbed starts on the GPU, as its CPU single solves."""
    from tests.solver.test_square_problems import _cases

    name, nlp, args = [c for c in _cases() if c[0] == "trig"][0]
    bounds = {k: v for k, v in args.items() if k != "x0"}
    problem = from_casadi(nlp, **bounds)
    rng = np.random.default_rng(4)
    X = np.asarray(args["x0"], float) * (1 + 0.2 * rng.standard_normal((40, 3)))
    res = problem.solve_batch(x0=X, print_level=0, device="cuda")
    assert set(res.path) == {"kernel"}, Counter(res.reason)
    _assert_matches_cpu(problem, res, [dict(x0=X[b]) for b in range(len(X))], print_level=0)


def _kernel_ms_per_iteration(problem, T, threads):
    """Best of three launches of the kernel alone over the instances with targets ``T``
    (``threads`` per block): ms per iteration of the slowest instance."""
    from benchmarks.bench_kernel_latency import kernel_alone

    ms, res = kernel_alone(problem, T, 3, threads, x0=X0)
    return ms / max(1, int(res.iters.max()))


def test_instances_sharing_a_warp_run_together(ik):
    """A warp of 32 IK instances iterates about as fast as one instance alone: the
    threads that part inside an iteration (line searches, barrier updates of different
    lengths) meet again before the next.  Measured on an H100 (ms per iteration of the
    slowest instance): b0c3f53 0.45 with three instances per warp and 0.46 with 32; at
    a1cf643, where the barrier update's loop had two exits and a warp's threads ran one
    after another for the rest of their solves, 0.41 with one and 2.15 with 32
    (test_cuda_compiles.py::test_barrier_update_loop_has_one_exit)."""
    from caspar_backend.compiled.cuda.launch import multiprocessors

    sms = multiprocessors()
    T = arm_targets(32 * sms, seed=5)
    alone = _kernel_ms_per_iteration(ik, T[:sms], threads=1)
    warp = _kernel_ms_per_iteration(ik, T, threads=32)
    assert warp < 2.5 * alone, (warp, alone)


def _launch(problem, lanes, **inputs):
    """The kernel alone on fresh workspaces, ``lanes`` threads per instance."""
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import COLUMNS, kernel_plan
    from caspar_backend.compiled.cuda.launch import solve_on_device
    from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
    from caspar_backend.compiled.options import option_vector

    sub = batch_inputs(problem, None, **inputs)
    sub = sub.subset(np.arange(sub.size))
    plan = kernel_plan(problem, {}, sub)
    assert not plan.reason, plan.reason
    ws = DeviceWorkspaces(plan.layout, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg,
                          interleaved=COLUMNS, shared_structure=True)
    return solve_on_device(ws, option_vector(plan.opts), lanes=lanes)


@pytest.mark.parametrize("lanes", (4, 32))
def test_team_launch_answers_as_one_thread_per_instance(ik, lanes):
    """Teams of ``lanes`` threads per instance (cuda/team.py: K's assembly and K x split
    over the lanes, the sums in the one-lane order) give each instance the one-thread
    launch's code, iterations and answer bit for bit; a collocation problem (n = 401)
    and the IK with an infeasible instance."""
    bp = {b.name: b for b in bank(include_slow=False)}["optimal_control_200"]
    d = bp.build()
    problem = from_casadi(_nlp(d))
    rng = np.random.default_rng(9)
    x0 = np.asarray(d["x0"], float)
    X = np.array([x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                  for _ in range(6)])
    T = arm_targets(40, seed=13)
    ubg = np.full((40, 1), 2.5)
    ubg[7] = -10.0
    for prob, inputs in ((problem, dict(x0=X, **{k: d[k] for k in ("lbx", "ubx", "lbg",
                                                                  "ubg")})),
                         (ik, dict(x0=X0, p=T, ubg=ubg))):
        one, team = _launch(prob, 1, **inputs), _launch(prob, lanes, **inputs)
        for key in ("code", "iters", "f", "x", "lam_g", "lam_x"):
            np.testing.assert_array_equal(getattr(team, key), getattr(one, key), key)
