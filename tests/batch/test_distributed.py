"""Batches on a Dask cluster (caspar_backend/batch/distributed.py), on a LocalCluster of
two worker processes with one thread each:

* 10^4 IK instances (13 of them infeasible) and perturbed bank problems give the
  single-process ``solve_batch``'s result bit for bit (x, f, g, multipliers, status,
  message, iterations, path, reason), solved by the workers in several chunks;
* a worker killed in the middle of a batch: every instance still has its result,
  the same bits;
* the front ends: casadi's B-column call with the ``'client'`` option, Pyomo's
  ``solve_scenarios(..., client=...)``;
* what is refused before anything is sent: ``device='cuda'`` on workers without a
  usable GPU, unknown options, bad chunk sizes, a client that is not one.

Chunks whose tasks raise (retries, halving on memory errors, the statuses of a chunk
that fails) are in test_distributed_failures.py, on an in-process cluster.
"""

from __future__ import annotations

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from caspar_backend.device import gpu_problem  # noqa: E402
from caspar_backend.errors import DeviceError, ModelError, OptionError  # noqa: E402
from tests.batch.problems import build, perturbed_bank  # noqa: E402
from tests.batch.same import assert_identical  # noqa: E402

X0_IK = [0.1, 0.2, 0.3]


@pytest.fixture(scope="module")
def client():
    import dask

    # workers without Dask's MALLOC_TRIM_THRESHOLD_, as docs/batch.md advises (faster)
    with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                           processes=True, dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        c.wait_for_workers(2)
        yield c


@pytest.fixture(scope="module")
def ik():
    return build("ik")[0]


def ik_inputs(B, seed=0):
    from benchmarks.bench_small import ik_targets

    ubg = np.full((B, 1), 2.5)
    ubg[7::769] = -10.0          # q1 + q2 + q3 <= -10 with q_i >= -pi: infeasible
    return dict(x0=X0_IK, p=ik_targets(B, seed=seed), ubg=ubg)


def covers(res, B):
    """The result's chunks tile [0, B) (after any halving) and every instance has a
    status."""
    done = sorted((c["start"], c["stop"]) for c in res.extra["chunks"] if c["worker"])
    assert [a for a, _ in done] == [0] + [b for _, b in done[:-1]] and done[-1][1] == B
    assert len(res) == B and all(res.status)


def test_ten_thousand_ik_instances_equal_the_single_process_batch(client, ik):
    inp = ik_inputs(10_000)
    ref = ik.solve_batch(**inp, print_level=0)
    res = ik.solve_batch(**inp, print_level=0, client=client)
    assert_identical(res, ref)
    # the failing instances come back with their statuses, solved alone on a worker
    bad = np.flatnonzero(inp["ubg"][:, 0] < 0)
    assert [res.status[b] for b in bad] == ["Infeasible_Problem_Detected"] * 13
    assert {res.path[b] for b in bad} == {"single"}
    # one chunk per worker (the default chunking), each run on a worker's CPU -- which
    # worker takes which is the scheduler's choice: where one is slow to start (a loaded
    # host), the other may take both
    covers(res, 10_000)
    assert len(res.extra["chunks"]) == 2
    workers = set(client.scheduler_info()["workers"])
    assert set(res.extra["worker"]) <= workers and set(res.extra["device"]) == {"cpu"}
    assert res.timings["total"] > 0 and res.timings["lockstep"] > 0


@pytest.mark.parametrize("name", ["hs071", "hs076", "hs027", "chained_rosenbrock_10",
                                  "optimal_control_200", "needs_restoration_circle",
                                  "infeasible_disc_halfplane"])
def test_perturbed_bank_problems_equal_the_single_process_batch(client, name):
    problem, inp, opts = perturbed_bank(name, 6, seed=len(name))
    ref = problem.solve_batch(**inp, **opts)
    res = problem.solve_batch(**inp, **opts, client=client, chunk_size=2)
    assert_identical(res, ref)
    covers(res, 6)
    assert len(res.extra["chunks"]) == 3


def test_a_worker_killed_mid_batch_loses_no_instance(client, ik, tmp_path):
    from tests.batch.dask_faults import KillOnce

    marker = tmp_path / "killed"
    inp = ik_inputs(2000, seed=1)
    ref = ik.solve_batch(**inp, print_level=0)
    client.register_plugin(KillOnce(str(marker)))
    try:
        res = ik.solve_batch(**inp, print_level=0, client=client, chunk_size=250)
    finally:
        client.unregister_worker_plugin(KillOnce.name)
    # a worker died running a chunk (it wrote the marker, then SIGKILL)...
    assert marker.read_text().startswith("caspar-chunk-")
    # ... and every instance has its result, the single-process one
    assert_identical(res, ref)
    covers(res, 2000)
    assert not any(c["error"] for c in res.extra["chunks"])
    client.wait_for_workers(2)


def test_a_chunk_whose_worker_dies_too_often_gets_error_statuses(client, ik, tmp_path):
    from tests.batch.dask_faults import KillOnce

    # no second attempt after a death (Dask's default allows 3): KilledWorker at once
    scheduler = client.cluster.scheduler
    inp = ik_inputs(1200, seed=2)
    # the chunk running on the killed worker fails, and every chunk Dask had assigned to
    # that worker with it (a death counts against each).  Where the scheduler put them
    # is Dask's: on a loaded machine it gave all of them to one worker (CI, twice), and
    # then no chunk is left to keep its results -- so the scene is played again, up to
    # three times, until some chunk ran on the other worker
    for attempt in range(3):
        marker = tmp_path / f"killed-{attempt}"
        allowed, scheduler.allowed_failures = scheduler.allowed_failures, 0
        client.register_plugin(KillOnce(str(marker)))
        try:
            res = ik.solve_batch(**inp, print_level=0, client=client, chunk_size=150)
        finally:
            client.unregister_worker_plugin(KillOnce.name)
            scheduler.allowed_failures = allowed
            client.wait_for_workers(2)          # the nanny restarts the killed worker
        failed = [(c["start"], c["stop"]) for c in res.extra["chunks"] if c["error"]]
        if len(failed) < 8:
            break
    killed = tuple(map(int, marker.read_text().split()[0].split("-")[2:4]))
    assert killed in failed and len(failed) < 8
    ref = ik.solve_batch(**inp, print_level=0)
    for c in res.extra["chunks"]:
        rows = slice(c["start"], c["stop"])
        if c["error"]:
            assert c["error"].startswith("KilledWorker: Attempted to run task")
            assert set(res.status[rows]) == {"Unrecoverable_Exception"}
            assert set(res.path[rows]) == {"failed"} and set(res.reason[rows]) == {c["error"]}
            assert np.isnan(res.x[rows]).all() and not res.iterations[rows].any()
        else:                               # the other chunks: their own results
            np.testing.assert_array_equal(res.x[rows], ref.x[rows])
            assert res.status[rows] == ref.status[rows]


@pytest.mark.skipif(gpu_problem(solver=True) is None, reason="the workers have a GPU")
def test_cuda_on_workers_without_a_gpu_is_refused_before_anything_runs(client, ik):
    client.wait_for_workers(2)
    with pytest.raises(DeviceError, match=r"2 worker\(s\) cannot solve on a GPU.*'auto'"):
        ik.solve_batch(p=[1.0, 0.5], batch_size=4, client=client, device="cuda")
    # 'auto': each worker its GPU, else its CPU
    res = ik.solve_batch(p=[1.0, 0.5], batch_size=4, client=client, device="auto",
                         print_level=0)
    assert set(res.extra["device"]) == {"cpu"} and all(res.success)


def test_bad_calls_raise_before_anything_is_sent(client, ik):
    with pytest.raises(OptionError, match="no_such_option"):
        ik.solve_batch(batch_size=2, client=client, no_such_option=1)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ModelError, match="chunk_size must be an integer >= 1"):
            ik.solve_batch(batch_size=2, client=client, chunk_size=bad)
    with pytest.raises(ModelError, match="retries must be an integer >= 0"):
        ik.solve_batch(batch_size=2, client=client, retries=-1)
    for bad in (-1, 2.5):
        with pytest.raises(ModelError, match="batch_size must be a whole number >= 0"):
            ik.solve_batch(batch_size=bad, client=client)
    with pytest.raises(ModelError, match="instance 1"):
        ik.solve_batch(x0=[[0.0] * 3, [np.nan] * 3], client=client)
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        ik.solve_batch(batch_size=2, client="tcp://127.0.0.1:8786")
    with pytest.raises(ModelError, match="client="):
        ik.solve_batch(batch_size=2, chunk_size=1)


def test_a_problem_is_sent_once_per_client(client, ik):
    from caspar_backend.batch import distributed as dist

    ik.solve_batch(batch_size=3, client=client, print_level=0)
    first, digest = dist._SHIPPED[ik][client.id]
    ik.solve_batch(batch_size=5, client=client, print_level=0)
    assert dist._SHIPPED[ik][client.id][0] is first
    assert first.key.startswith(f"caspar-problem-{digest[:32]}-")
    # each worker process keeps its compiled copy under the digest
    kept = client.run(lambda: [d for d in __import__(
        "caspar_backend.batch.chunk", fromlist=["_KEPT"])._KEPT])
    assert any(digest in ds for ds in kept.values())


def test_casadi_columns_with_a_client_equal_those_without(client):
    import casadi as ca

    from benchmarks.bench_small import ik_problem, ik_targets
    from caspar_backend.casadi import nlpsol

    nlp, bounds = ik_problem()
    opts = {"caspar": {"print_level": 0}, "print_time": False}
    S = nlpsol("S", "caspar", nlp, opts)
    D = nlpsol("D", "caspar", nlp, dict(opts, client=client))
    P = ik_targets(600, seed=2).T                       # (2, B): B columns
    r_s, r_d = S(x0=0.1, p=P, **bounds), D(x0=0.1, p=P, **bounds)
    for k in ("x", "f", "g", "lam_x", "lam_g", "lam_p"):
        np.testing.assert_array_equal(np.array(r_d[k]), np.array(r_s[k]), err_msg=k)
    assert D.stats()["batch"]["return_status"] == S.stats()["batch"]["return_status"]
    with pytest.raises(TypeError, match="dask.distributed.Client"):
        nlpsol("E", "caspar", nlp, dict(opts, client=ca.DM(1)))


def test_pyomo_scenarios_with_a_client_equal_those_without(client):
    pyo = pytest.importorskip("pyomo.environ")

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(5)
    m.x = pyo.Var(m.I, bounds=(-2, 2), initialize=0.5)
    m.q = pyo.Param(m.I, initialize={i: 1.0 + i for i in range(1, 6)}, mutable=True)
    m.c = pyo.Param(initialize=2.0, mutable=True)
    m.row = pyo.Constraint(m.I, rule=lambda m, i: m.q[i] * m.x[i] ** 2 + pyo.sin(m.x[i])
                           <= m.c)
    m.obj = pyo.Objective(expr=sum(m.q[i] * (m.x[i] - 0.1 * i) ** 4 for i in m.I)
                          + m.x[1] * m.x[2])
    rng = np.random.default_rng(3)
    scen = [{m.q: {i: float(v) for i, v in zip(range(1, 6), rng.uniform(0.5, 3, 5))},
             "c": float(rng.uniform(0.5, 3))} for _ in range(40)]
    solver = pyo.SolverFactory("caspar")
    ref = solver.solve_scenarios(m, scen, print_level=0)
    res = solver.solve_scenarios(m, scen, print_level=0, client=client)
    assert_identical(res.batch, ref.batch)
    assert [r.termination_condition for r in res] == [r.termination_condition for r in ref]
    assert len(res.batch.extra["chunks"]) == 1          # 40 < MIN_CHUNK: one chunk


def test_an_empty_batch_on_a_cluster_is_an_empty_result(client, ik):
    """No instances: the empty result solve_batch gives without a cluster, nothing sent."""
    for kw in (dict(batch_size=0), dict(p=np.zeros((0, ik.n_params)))):
        res = ik.solve_batch(client=client, **kw)
        local = ik.solve_batch(**kw)
        assert len(res) == len(local) == 0
        assert res.x.shape == local.x.shape == (0, ik.n)
        assert res.g.shape == local.g.shape == (0, ik.m) and res.status == []
