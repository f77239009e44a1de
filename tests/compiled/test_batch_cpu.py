"""solve_batch on the CPU through the compiled kernel (caspar_backend.compiled.batch_cpu):
each instance equal to its own Problem.solve bit for bit (status, iterations, x, f,
multipliers), failing instances re-solved by their own solve, long instances handed to
the general path, and the lockstep path's answers."""
import numpy as np
import pytest

pytest.importorskip("numba")
pytest.importorskip("casadi")

from caspar_backend import from_casadi  # noqa: E402
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets  # noqa: E402
from caspar_backend.batch import solve as batch_solve  # noqa: E402
from caspar_backend.compiled.dispatch import kernels_ready  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

X0 = np.array([0.1, 0.2, 0.3])


@pytest.fixture(scope="module")
def ik():
    kernels_ready(wait=True)
    nlp, bounds = arm_ik()
    return from_casadi(nlp, **bounds)


def _same_as_single(res, problem, rows, **single_inputs):
    for b, kw in rows:
        s = problem.solve(print_level=0, **kw)
        assert (res.status[b], res.iterations[b]) == (s.status, s.iterations)
        assert res.f[b] == s.f
        np.testing.assert_array_equal(res.x[b], s.x)
        np.testing.assert_allclose(res.lam_g[b], s.lam_g, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(res.lam_x[b], s.lam_x, rtol=1e-12, atol=1e-14)


def test_ik_batch_with_infeasible_instances_equals_single_solves(ik):
    T = np.array(arm_targets(150, seed=4))
    ubg = np.full((150, 1), 2.5)
    ubg[[3, 77]] = -10.0                       # q1 + q2 + q3 <= -10: infeasible
    res = ik.solve_batch(x0=X0, p=T, ubg=ubg, print_level=0)
    assert res.path[0] == "kernel" and res.path[3] == res.path[77] == "single"
    assert res.status[3] == "Infeasible_Problem_Detected"
    assert res.extra["device"] == ["cpu"] * 150     # the kernel's and the singles' device
    _same_as_single(res, ik, [(b, dict(x0=X0, p=T[b], ubg=ubg[b])) for b in
                              (0, 1, 3, 64, 65, 77, 149)])


def test_auto_without_a_gpu_takes_the_cpu_kernel(ik, monkeypatch):
    """device='auto' where no GPU is usable: the CPU kernel, as device='cpu' (it used to
    fall to the lockstep NumPy path, ~10x slower)."""
    monkeypatch.setattr(batch_solve, "resolve_device", lambda device, **kw: "cpu")
    T = np.array(arm_targets(6, seed=7))
    res = ik.solve_batch(x0=X0, p=T, print_level=0, device="auto")
    assert set(res.path) == {"kernel"} and set(res.extra["device"]) == {"cpu"}
    _same_as_single(res, ik, [(b, dict(x0=X0, p=T[b])) for b in (0, 5)])


@pytest.mark.parametrize("per_core,on_gpu", [(10 ** 6, False), (0, True)])
def test_auto_takes_the_cuda_kernel_from_its_size_on(ik, monkeypatch, per_core, on_gpu):
    """device='auto' with a usable GPU (faked here: resolve_device says 'cuda', and the
    CUDA kernel's call is recorded, then answered by the CPU one): a group of fewer than
    AUTO_GPU_MIN_PER_CORE instances per core goes to the CPU kernel, a larger one to the
    CUDA kernel."""
    B = 8
    monkeypatch.setattr(batch_solve, "resolve_device", lambda device, **kw: "cuda")
    monkeypatch.setattr(batch_solve, "AUTO_GPU_MIN_PER_CORE", per_core)
    calls, kernel = [], batch_solve._kernel

    def recording(problem, inp, idx, options, out, cuda, stop, threads=None, started=None):
        calls.append(cuda)
        return kernel(problem, inp, idx, options, out, False, stop, threads, started)

    monkeypatch.setattr(batch_solve, "_kernel", recording)
    T = np.array(arm_targets(B, seed=6))
    res = ik.solve_batch(x0=X0, p=T, print_level=0, device="auto")
    assert calls == [on_gpu]
    assert set(res.path) == {"kernel"}
    _same_as_single(res, ik, [(b, dict(x0=X0, p=T[b])) for b in (0, B - 1)])


def test_kernel_and_lockstep_give_the_same_bits(ik, monkeypatch):
    T = np.array(arm_targets(200, seed=5))
    a = ik.solve_batch(x0=X0, p=T, print_level=0)
    monkeypatch.setattr(batch_solve, "KERNEL_ON_CPU", False)
    b = ik.solve_batch(x0=X0, p=T, print_level=0)
    assert set(a.path) == {"kernel"} and set(b.path) == {"lockstep"}
    assert set(a.extra["device"]) == set(b.extra["device"]) == {"cpu"}
    assert list(a.status) == list(b.status) and list(a.iterations) == list(b.iterations)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.f, b.f)


@pytest.mark.parametrize("name", ["hs071", "hs015", "optimal_control_200"])
def test_bank_batch_equals_single_solves(ik, name):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    d = bp.build()
    problem = from_casadi(_nlp(d))
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    rng = np.random.default_rng(0)
    X = np.asarray(d["x0"], float) * (1 + 0.05 * rng.standard_normal((5, len(d["x0"]))))
    res = problem.solve_batch(x0=X, **bounds, print_level=0, **dict(bp.options))
    assert "kernel" in set(res.path)
    _same_as_single(res, problem, [(b, dict(x0=X[b], **bounds, **dict(bp.options)))
                                   for b in range(5)])


def test_instances_past_their_time_share_go_to_the_general_path(ik):
    """tol = 1e-300 never converges (tiny_step_y_tol = 0: nor do its tiny steps end it): the
    instance gets its share of the time budget in the kernel, then its own solve
    (interruptible) runs to max_iter."""
    T = np.array(arm_targets(1, seed=6))
    res = ik.solve_batch(x0=X0, p=T, print_level=0, tol=1e-300, acceptable_iter=0,
                         tiny_step_y_tol=0.0, max_iter=600)
    assert list(res.path) == ["single"] and "time budget" in res.reason[0]
    assert (res.status[0], res.iterations[0]) == ("Maximum_Iterations_Exceeded", 600)


def test_chunking_keeps_a_call_within_the_time_budget():
    from caspar_backend.compiled.batch_cpu import CHUNK, TYPICAL_ITERATIONS, chunking

    assert chunking(20_000, 3000) == (CHUNK, 20_000 // CHUNK)      # tiny: full chunks
    assert chunking(300, 3000) == (300 // TYPICAL_ITERATIONS, 50)   # medium: fewer
    assert chunking(50, 3000) == (1, 50)                            # one at a time
    assert chunking(20_000, 100) == (CHUNK, 100)                    # max_iter caps


def test_medium_problem_solves_in_the_kernel(ik):
    """Van der Pol collocation (n = 452, m = 402; the MPC step of bench_batch): a budget
    of a few hundred iterations gives each instance its full share in smaller calls,
    where 64-instance calls once capped every instance below its need."""
    from caspar_backend.adapters.casadi.models import vanderpol_collocation

    nlp, args = vanderpol_collocation(50, initial_state_param=True)
    args.pop("p")
    problem = from_casadi(nlp)
    rng = np.random.default_rng(1)
    S = np.stack([rng.uniform(-0.2, 0.6, 4), rng.uniform(-0.8, 1.2, 4)], axis=1)
    res = problem.solve_batch(p=S, print_level=0, **args)
    assert set(res.path) == {"kernel"}, set(res.reason)
    _same_as_single(res, problem, [(b, dict(p=S[b], **args)) for b in range(4)])


def test_threads_do_not_change_a_bit(ik):
    """Kernel calls spread over Numba's threads (solve_rows_shared) give the answers of
    one thread solving every instance in turn, bit for bit."""
    T = np.array(arm_targets(120, seed=6))
    one = ik.solve_batch(x0=X0, p=T, print_level=0, threads=1)
    for threads in (3, None):
        many = ik.solve_batch(x0=X0, p=T, print_level=0, threads=threads)
        assert set(many.path) == {"kernel"}
        assert list(many.status) == list(one.status)
        np.testing.assert_array_equal(many.iterations, one.iterations)
        for k in ("x", "f", "g", "lam_g", "lam_x"):
            np.testing.assert_array_equal(getattr(many, k), getattr(one, k), err_msg=k)


def test_results_own_their_memory(ik):
    """Every array of a kernel batch's result is C-ordered memory of its own (never a
    view of the kernel's workspaces): for a batch every instance of which the kernel
    finished (its arrays taken whole) and for one with an instance re-solved alone."""
    T = np.array(arm_targets(20, seed=7))
    ubg = np.full((20, 1), 2.5)
    ubg[5] = -10.0                               # infeasible: its own solve
    for res in (ik.solve_batch(x0=X0, p=T, print_level=0),
                ik.solve_batch(x0=X0, p=T, ubg=ubg, print_level=0)):
        assert set(res.path) <= {"kernel", "single"}
        for k in ("x", "f", "g", "lam_g", "lam_x", "iterations"):
            a = getattr(res, k)
            assert a.flags.c_contiguous and a.flags.owndata and a.shape[0] == 20, k
    whole = ik.solve_batch(x0=X0, p=T, print_level=0)
    part = ik.solve_batch(x0=X0, p=T, ubg=ubg, print_level=0)
    keep = np.arange(20) != 5
    for k in ("x", "f", "g", "lam_g", "lam_x", "iterations"):
        np.testing.assert_array_equal(getattr(part, k)[keep], getattr(whole, k)[keep],
                                      err_msg=k)


@pytest.mark.parametrize("idx", [[], [3], [0, 1, 2], [2, 3, 4, 5], [0, 2], [1, 0],
                                 [4, 5, 7]])
def test_bound_selections_pick_the_index_arrays_entries(idx):
    """WorkspaceLayout.lower_sel / upper_sel: a slice exactly where the indices are
    consecutive and ascending, selecting the same entries in the same order."""
    from caspar_backend.compiled.workspace_layout import _selector

    a = np.array(idx, np.int64)
    sel = _selector(a)
    consecutive = not idx or idx == list(range(idx[0], idx[0] + len(idx)))
    assert isinstance(sel, slice) == consecutive
    v = np.arange(10.0) * 3.0
    assert v[sel].tolist() == v[a].tolist()


def test_layouts_with_gaps_in_their_bounds_keep_index_arrays():
    """A model whose finite bounds skip variables: the layout's selections are its index
    arrays (no slice), and the batch's multipliers are the single solves'."""
    from caspar_backend.compiled.solve import layout_for

    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    lbx = np.array(bounds["lbx"], float)
    lbx[1] = -np.inf                               # the second joint: no lower bound
    ubx = np.array(bounds["ubx"], float)
    lay = layout_for(problem, lbx, ubx, np.array([-np.inf]), np.array([2.5]))
    assert not isinstance(lay.lower_sel, slice)
    np.testing.assert_array_equal(lay.lower_sel, lay.lower_idx)
    T = np.array(arm_targets(6, seed=8))
    res = problem.solve_batch(x0=X0, p=T, lbx=lbx, print_level=0)
    assert set(res.path) == {"kernel"}
    _same_as_single(res, problem, [(b, dict(x0=X0, p=T[b], lbx=lbx)) for b in range(6)])


def test_concurrent_batches_equal_sequential_ones(ik):
    """solve_batch called from several threads at once (as a service's workers call it;
    each spreads its instances over Numba's threads) gives each call the answers it gets
    alone, bit for bit -- batches of different sizes, bounds and options among them."""
    import threading

    T = np.array(arm_targets(96, seed=9))
    calls = [dict(p=T[:16]), dict(p=T[16:80]), dict(p=T[80:], ubg=[2.0]),
             dict(p=T[:40], tol=1e-6), dict(p=T[40:56], lbx=[-3.0, -3.0, -3.0])]
    alone = [ik.solve_batch(x0=X0, print_level=0, **kw) for kw in calls]
    got = [[None] * len(calls) for _ in range(3)]
    barrier = threading.Barrier(len(calls))

    def run(k):
        barrier.wait()
        for rep in range(3):
            got[rep][k] = ik.solve_batch(x0=X0, print_level=0, **calls[k])

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rep in range(3):
        for res, ref in zip(got[rep], alone):
            assert set(res.path) == {"kernel"}
            assert res.status == ref.status and res.path == ref.path
            for k in ("x", "f", "g", "lam_g", "lam_x", "iterations"):
                np.testing.assert_array_equal(getattr(res, k), getattr(ref, k), err_msg=k)


def test_a_child_forked_after_openmp_solves_on_its_own_thread(ik):
    """A process forked after the batch's parallel calls started the threading layer (GNU
    OpenMP ends such a child at its first parallel region) still solves batches, on its
    calling thread, with the parent's answers bit for bit."""
    import os
    import pickle

    T = np.array(arm_targets(40, seed=12))
    ref = ik.solve_batch(x0=X0, p=T, print_level=0)        # the layer is running now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                           # the child: never returns
        code = 1
        try:
            res = ik.solve_batch(x0=X0, p=T, print_level=0)
            os.write(w, pickle.dumps((list(res.status), res.iterations, res.x, res.f)))
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0
    status, iterations, x, f = pickle.loads(data)
    assert status == list(ref.status)
    np.testing.assert_array_equal(iterations, ref.iterations)
    np.testing.assert_array_equal(x, ref.x)
    np.testing.assert_array_equal(f, ref.f)


_WORKQUEUE_SCRIPT = """
import threading
import numpy as np
from caspar_backend import from_casadi
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled.dispatch import kernels_ready
import numba

kernels_ready(wait=True)
nlp, bounds = arm_ik()
ik = from_casadi(nlp, **bounds)
X0 = np.array([0.1, 0.2, 0.3])
T = np.array(arm_targets(64, seed=4))
alone = [ik.solve_batch(x0=X0, p=T[k::4], print_level=0) for k in range(4)]
assert numba.threading_layer() == "workqueue", numba.threading_layer()
got = [None] * 4
def run(k):
    for _ in range(5):
        got[k] = ik.solve_batch(x0=X0, p=T[k::4], print_level=0)
threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
for t in threads: t.start()
for t in threads: t.join()
for res, ref in zip(got, alone):
    assert set(res.path) == {"kernel"}, set(res.path)
    np.testing.assert_array_equal(res.x, ref.x)
    np.testing.assert_array_equal(res.iterations, ref.iterations)
print("ok")
"""


def test_workqueue_layer_takes_parallel_calls_in_turn(ik):
    """Under Numba's 'workqueue' threading layer (one parallel call at a time: a second
    at once aborts the process) batches from four threads at once all finish, each with
    its answers alone."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="2")
    run = subprocess.run([sys.executable, "-c", _WORKQUEUE_SCRIPT], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith("ok")


@pytest.mark.parametrize("limit", ["max_wall_time", "max_cpu_time"])
def test_cpu_batch_time_limit_stops_every_instance(limit):
    """A CPU batch given a short time limit stays on the kernel: the limit counts from
    the batch's start for the whole group, as on the lockstep path (compiled/deadline.py
    sets every instance's stop slot), and each instance ends with IPOPT's status --
    the running call's at their next termination test, later calls' at their first."""
    import time

    status = {"max_wall_time": "Maximum_WallTime_Exceeded",
              "max_cpu_time": "Maximum_CpuTime_Exceeded"}[limit]
    kernels_ready(wait=True)
    bp = {b.name: b for b in bank(include_slow=False)}["chained_rosenbrock_1000"]
    d = bp.build()
    problem = from_casadi(_nlp(d))
    bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
    B = 16       # calls of a few instances capped at their share: longer than the limit
    t0 = time.perf_counter()
    res = problem.solve_batch(x0=d["x0"], batch_size=B, print_level=0, **bounds,
                              **{limit: 0.02})
    took = time.perf_counter() - t0
    # the instances of the calls before the limit passed reached their share and were
    # solved again by their own solves, which end by their own limit
    assert set(res.status) == {status}
    stopped = np.array([p == "kernel" for p in res.path])
    assert stopped.any() and {p for p, k in zip(res.path, stopped) if not k} <= {"single"}
    assert took < 0.02 * (1 + int((~stopped).sum())) + 0.3
    full = problem.solve(d["x0"], print_level=0, **bounds)
    assert max(res.iterations) < full.iterations


def test_fetch_add_hands_out_each_index_once():
    """solve_rows_shared's counter: Numba's threads taking indices by fetch_add get each
    of 0 .. n - 1 exactly once, and the counter ends at n plus one miss per thread."""
    from numba import njit, prange

    from caspar_backend.compiled.kernels.solve_many import fetch_add

    @njit(parallel=True, nogil=True)
    def take_all(counter, taken, threads):
        for _ in prange(threads):
            b = fetch_add(counter, 1)
            while b < taken.shape[0]:
                taken[b] += 1
                b = fetch_add(counter, 1)

    counter, taken = np.zeros(1, np.int64), np.zeros(50_000, np.int64)
    take_all(counter, taken, 4)
    assert (taken == 1).all()
    assert counter[0] == taken.size + 4


def test_batch_reads_the_cpu_clock_only_for_a_cpu_limit(ik, monkeypatch):
    """``time.process_time`` (the process's CPU clock, up to ms per read while a parallel
    call's threads wind down) is not read by a CPU batch without a CPU limit -- neither
    by solve_batch, the kernel's calls nor their deadline -- and is with one."""
    import time

    reads = []
    clock = time.process_time
    monkeypatch.setattr(time, "process_time", lambda: reads.append(1) or clock())
    T = np.array(arm_targets(24, seed=9))
    free = ik.solve_batch(x0=X0, p=T, print_level=0, threads=2)
    assert set(free.path) == {"kernel"} and not reads
    limited = ik.solve_batch(x0=X0, p=T, print_level=0, threads=2, max_cpu_time=100.0)
    assert reads
    np.testing.assert_array_equal(limited.iterations, free.iterations)
