"""The solver service (:mod:`caspar_backend.batch.service`).

* Eight client threads on one service get the answers of sequential ``problem.solve``
  calls: the three-link arm IK (``benchmarks/bench_small.py``) with different targets,
  same status and iterations, the same x and f up to round-off (``solve_batch``'s
  contract: a lockstep inside may differ from the single solve in the last bits).
* Batching happens: with concurrent clients ``solve_batch`` (spied on) is called fewer
  times than there are requests, and every request is in exactly one call.
* ``max_wait``: a lone request's batch starts after about ``max_wait`` (not before), and
  a full batch does not wait for it, nor one of as many requests as the last batch had
  (clients sending their next request as each answer comes).
* A bad request fails alone, with the error of its single solve, and never joins a
  batch; an exception of ``solve_batch`` fails that batch's futures only.
* ``close()``: queued requests are answered (without waiting ``max_wait``), later submits
  raise; ``cancel_pending`` cancels them; a ``with`` block closes; a dropped service is
  finalized; interpreter exit does not wait for a running batch.
* ``workers``: one per core on the CPU by default, one on a GPU; two workers answer
  everything.  A test that queues requests behind a blocked batch sets ``workers=1``.
"""

from __future__ import annotations

import gc
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import CancelledError
from pathlib import Path

import numpy as np
import pytest
from caspar_backend import Graph, ModelError, NLPModel, OptionError, Problem
from caspar_backend.batch.service import (ServiceClosedError, SolverService,
                                          default_workers)
from caspar_backend.errors import DeviceError, NonFiniteError

ROOT = Path(__file__).resolve().parents[2]
X0 = [0.1, 0.2, 0.3]


@pytest.fixture(scope="module")
def ik():
    """The IK problem compiled once and 16 reachable targets."""
    pytest.importorskip("casadi")
    import caspar_backend as cb
    from benchmarks.bench_small import ik_problem, ik_targets

    nlp, bounds = ik_problem()
    return cb.from_casadi(nlp, **bounds), ik_targets(16, seed=3)


def _rosenbrock_p():
    """min (p - x0)^2 + 100 (x1 - x0^2)^2: x* = (p, p^2); one parameter, no constraints."""
    g = Graph()
    x, p = [g.var(0), g.var(1)], g.param(0)
    inf = np.full(2, np.inf)
    return Problem(NLPModel(g, (p - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2, [], -inf,
                            inf, np.zeros(0), np.zeros(0), x0=np.array([-1.2, 1.0]),
                            p=np.array([1.0])))


class Spy:
    """Stands in for ``problem.solve_batch``: records (monotonic start, batch size) of
    each call, optionally blocks on ``gate`` or raises ``fail`` first."""

    def __init__(self, problem, gate=None, fail=None):
        self.real, self.calls, self.gate, self.fail = problem.solve_batch, [], gate, fail
        self.entered = threading.Event()
        problem.solve_batch = self

    def __call__(self, **kw):
        self.calls.append((time.monotonic(), kw["x0"].shape[0]))
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(30)
        if self.fail is not None:
            exc, self.fail = self.fail, None
            raise exc
        return self.real(**kw)


def _same(r, s):
    assert (r.status, r.iterations) == (s.status, s.iterations)
    np.testing.assert_allclose(r.x, s.x, rtol=1e-9, atol=1e-12)
    assert r.f == pytest.approx(s.f, rel=1e-9, abs=1e-14)


def test_threads_get_the_sequential_answers(ik):
    P, targets = ik
    seq = [P.solve(x0=X0, p=t, print_level=0) for t in targets]
    out, errors = {}, []
    barrier = threading.Barrier(8)
    with SolverService(P, max_batch_size=1024, max_wait=0.05, print_level=0) as svc:
        def client(k):
            try:
                barrier.wait()
                for i in range(k, len(targets), 8):    # two targets per thread
                    out[i] = svc.solve(X0, targets[i], timeout=120)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
    assert not errors, errors
    assert sorted(out) == list(range(len(targets)))
    for i, s in enumerate(seq):
        _same(out[i], s)
    st = svc.stats
    assert (st.submitted, st.answered, st.failed, st.rejected) == (16, 16, 0, 0)


def test_concurrent_requests_share_batches():
    P = _rosenbrock_p()
    spy = Spy(P)
    n = 12
    barrier = threading.Barrier(n)
    futs = [None] * n
    # max_batch_size = n: the batch fills before the (long) max_wait is over
    with SolverService(P, max_batch_size=n, max_wait=5.0, print_level=0) as svc:
        def client(k):
            barrier.wait()
            futs[k] = svc.submit(p=[1.0 + 0.1 * k])

        threads = [threading.Thread(target=client, args=(k,)) for k in range(n)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        res = [f.result(60) for f in futs]
    assert time.monotonic() - t0 < 5.0          # a full batch did not wait max_wait
    assert len(spy.calls) < n and sum(size for _, size in spy.calls) == n
    assert svc.stats.batches == len(spy.calls)
    assert svc.stats.mean_batch_size == n / len(spy.calls)
    for k, r in enumerate(res):
        q = 1.0 + 0.1 * k
        assert r.status == "Solve_Succeeded"
        np.testing.assert_allclose(r.x, [q, q * q], rtol=1e-6)


def test_lone_request_waits_max_wait():
    P = _rosenbrock_p()
    spy = Spy(P)
    with SolverService(P, max_batch_size=100, max_wait=0.3, print_level=0) as svc:
        t0 = time.monotonic()
        r = svc.solve(p=[2.0], timeout=60)
    start, size = spy.calls[0]
    assert size == 1 and r.status == "Solve_Succeeded"
    # not before max_wait; after it by no more than a loaded machine's scheduling delay
    assert 0.3 - 0.005 <= start - t0 <= 0.3 + 1.0
    # max_wait = 0: the lone request starts at once
    spy.calls.clear()
    with SolverService(P, max_batch_size=100, max_wait=0.0, print_level=0) as svc:
        t0 = time.monotonic()
        svc.solve(p=[2.0], timeout=60)
    assert spy.calls[0][0] - t0 < 0.25


def test_returning_clients_close_the_batch_early():
    """Clients that send their next request as each answer comes: the first batch waits
    max_wait (no batch before it), the later ones start as soon as the previous batch's
    clients are all back; a single client's later requests start at once."""
    P = _rosenbrock_p()
    spy = Spy(P)
    # max_wait long against a batch's solve on a loaded 2-core machine (~1 s seen), so
    # that "did not wait max_wait" stays a property of the service, not of the load
    n, rounds, wait = 6, 3, 3.0
    barrier = threading.Barrier(n)
    with SolverService(P, max_batch_size=100, max_wait=wait, print_level=0) as svc:
        def client(k):
            barrier.wait()
            for r in range(rounds):
                svc.solve(p=[1.0 + 0.1 * k + r], timeout=60)

        threads = [threading.Thread(target=client, args=(k,)) for k in range(n)]
        t0 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert [size for _, size in spy.calls] == [n] * rounds
    # the later batches did not wait max_wait each
    assert spy.calls[0][0] - t0 >= wait - 0.005
    starts = [t for t, _ in spy.calls]
    assert all(b - a < wait for a, b in zip(starts, starts[1:]))
    spy.calls.clear()
    with SolverService(P, max_batch_size=100, max_wait=wait, print_level=0) as svc:
        t0 = time.monotonic()
        for r in range(rounds):
            svc.solve(p=[2.0 + r], timeout=60)
    assert [size for _, size in spy.calls] == [1] * rounds
    starts = [t for t, _ in spy.calls]
    assert all(b - a < wait for a, b in zip(starts, starts[1:]))


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value


@pytest.mark.parametrize("bad", [dict(x0=[0.0, 1.0, 2.0]), dict(p=[1.0, 2.0]),
                                 dict(lbx=[3.0, 0.0], ubx=[1.0, 1.0]),
                                 dict(lbx=[np.nan, 0.0]), dict(x0=[np.inf, 0.0]),
                                 dict(lam_x0=[1.0, 2.0, 3.0]), dict(p="two"),
                                 dict(x0=[0.0, object()]), dict(ubg=[[1.0], [2.0, 3.0]])])
def test_bad_request_fails_alone_with_the_single_solve_error(bad):
    P = _rosenbrock_p()
    spy = Spy(P)
    # the single solve reads the multipliers only for a warm start (IPOPT's rule)
    opts = dict(print_level=0, warm_start_init_point="yes")
    want = _error(lambda: P.solve(**opts, **bad))
    with SolverService(P, max_batch_size=3, max_wait=2.0, **opts) as svc:
        good1, wrong, good2 = svc.submit(p=[1.5]), svc.submit(**bad), svc.submit(p=[2.5])
        with pytest.raises(type(want)) as info:
            wrong.result()
        assert str(info.value) == str(want)
        assert good1.result(60).status == good2.result(60).status == "Solve_Succeeded"
    assert [size for _, size in spy.calls] == [2]
    assert (svc.stats.rejected, svc.stats.answered) == (1, 2)


def test_non_finite_p_fails_alone():
    P = _rosenbrock_p()
    with SolverService(P, max_wait=0.0, print_level=0) as svc:
        bad = svc.submit(p=[np.nan])
        with pytest.raises(NonFiniteError, match=r"p\[0\]=nan"):
            bad.result()
        assert svc.solve(p=[2.0], timeout=60).status == "Solve_Succeeded"


def test_solve_batch_exception_fails_only_its_batch():
    P = _rosenbrock_p()
    boom = RuntimeError("device lost")
    spy = Spy(P, fail=boom)
    with SolverService(P, max_batch_size=2, max_wait=5.0, print_level=0) as svc:
        a, b = svc.submit(p=[1.5]), svc.submit(p=[2.0])
        for f in (a, b):
            with pytest.raises(RuntimeError, match="device lost"):
                f.result(60)
        assert svc.solve(p=[2.0], timeout=60).status == "Solve_Succeeded"   # still serving
    assert [size for _, size in spy.calls] == [2, 1]
    assert (svc.stats.failed, svc.stats.answered, svc.stats.batches) == (2, 1, 2)
    # (an unknown option never reaches a batch: test_bad_options_are_refused_at_construction)


def test_close_answers_queued_requests_then_refuses():
    P = _rosenbrock_p()
    svc = SolverService(P, max_batch_size=100, max_wait=30.0, print_level=0)
    futs = [svc.submit(p=[1.0 + k]) for k in range(3)]
    t0 = time.monotonic()
    svc.close()                                   # does not wait the 30 s max_wait
    assert time.monotonic() - t0 < 20
    assert all(f.done() and f.result().status == "Solve_Succeeded" for f in futs)
    assert svc.closed
    with pytest.raises(ServiceClosedError):
        svc.submit(p=[1.0])
    svc.close()                                   # again: nothing more


def test_close_cancel_pending_and_client_cancel():
    P = _rosenbrock_p()
    gate = threading.Event()
    spy = Spy(P, gate=gate)
    svc = SolverService(P, max_batch_size=1, max_wait=0.0, workers=1,
                        print_level=0)
    running = svc.submit(p=[1.5])
    assert spy.entered.wait(30)                   # the worker is inside solve_batch
    left_by_client, queued = svc.submit(p=[2.0]), svc.submit(p=[2.5])
    assert left_by_client.cancel()                # still queued: the client may cancel
    svc.close(wait=False, cancel_pending=True)
    assert queued.cancelled()
    gate.set()
    assert running.result(60).status == "Solve_Succeeded"
    svc.close()
    assert [size for _, size in spy.calls] == [1]
    with pytest.raises(CancelledError):
        queued.result()
    assert svc.stats.cancelled == 2


def test_with_block_and_finalizer():
    P = _rosenbrock_p()
    with SolverService(P, max_wait=0.0, print_level=0) as svc:
        r = svc.solve(p=[3.0], timeout=60)
    assert svc.closed and r.status == "Solve_Succeeded"
    # leaving by an exception cancels what is still queued
    gate = threading.Event()
    Spy(P, gate=gate)
    with pytest.raises(KeyboardInterrupt):
        with SolverService(P, max_batch_size=1, max_wait=0.0, workers=1,
                           print_level=0) as svc:
            svc.submit(p=[1.0])
            queued = svc.submit(p=[2.0])
            raise KeyboardInterrupt
    assert queued.cancelled()
    # a service dropped without close(): its finalizer cancels the queue
    svc = SolverService(P, max_batch_size=1, max_wait=0.0, workers=1,
                        print_level=0)
    svc.submit(p=[1.0])
    queued = svc.submit(p=[2.0])
    del svc
    gc.collect()
    assert queued.cancelled()
    gate.set()


def test_interpreter_exit_does_not_wait_for_a_running_batch():
    script = textwrap.dedent("""
        import time, numpy as np
        from caspar_backend import Graph, NLPModel, Problem, SolverService
        g = Graph()
        x = g.var(0)
        P = Problem(NLPModel(g, (x - 1) ** 2, [], np.array([-5.0]), np.array([5.0]),
                             np.zeros(0), np.zeros(0), x0=np.zeros(1)))
        P.solve_batch = lambda **kw: time.sleep(3600)   # a batch that never ends
        svc = SolverService(P, max_batch_size=1, max_wait=0.0)
        futs = [svc.submit() for _ in range(5)]
        time.sleep(0.2)
        print("exiting", flush=True)
    """)
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "exiting" in out.stdout and time.monotonic() - t0 < 60


def test_settings_are_checked():
    P = _rosenbrock_p()
    for bad in (dict(max_batch_size=0), dict(max_wait=-1.0), dict(max_wait=float("inf")),
                dict(workers=0)):
        with pytest.raises(OptionError):
            SolverService(P, **bad)


@pytest.mark.parametrize("cores, threads", [(1, 1), (2, 2), (3, 2), (8, 4), (16, 8)])
def test_default_kernel_threads_half_the_cores(monkeypatch, cores, threads):
    from caspar_backend.batch import service
    from caspar_backend.compiled import cores as cores_mod

    monkeypatch.setattr(cores_mod, "usable_cores", lambda: cores)
    assert service.default_kernel_threads() == threads
    P = _rosenbrock_p()
    with SolverService(P, print_level=0) as svc:
        assert svc._queue.options["threads"] == threads
    with SolverService(P, print_level=0, threads=1) as svc:
        assert svc._queue.options["threads"] == 1


def test_default_workers_one():
    assert default_workers() == default_workers("cpu") == 1
    assert default_workers("cuda") == default_workers("auto") == 1
    P = _rosenbrock_p()
    with SolverService(P, print_level=0) as svc:
        assert "workers=1 " in repr(svc)
        assert svc.solve(p=[2.0], timeout=60).status == "Solve_Succeeded"


def test_two_workers_answer_everything():
    P = _rosenbrock_p()
    with SolverService(P, max_batch_size=2, max_wait=0.01, workers=2, print_level=0) as svc:
        futs = [svc.submit(p=[1.0 + 0.25 * k]) for k in range(8)]
        res = [f.result(60) for f in futs]
    for k, r in enumerate(res):
        q = 1.0 + 0.25 * k
        np.testing.assert_allclose(r.x, [q, q * q], rtol=1e-6)
    assert svc.stats.answered == 8 and svc.stats.max_batch_size <= 2


def test_model_error_is_a_caspar_error():
    # the rejected request's error class is the single solve's (a ModelError here)
    P = _rosenbrock_p()
    with SolverService(P, max_wait=0.0) as svc:
        with pytest.raises(ModelError, match="x0 has 3 entries, expected 2"):
            svc.solve(x0=[1.0, 2.0, 3.0])


def test_solve_timeout_withdraws_the_request():
    P = _rosenbrock_p()
    gate = threading.Event()
    spy = Spy(P, gate=gate)
    with SolverService(P, max_batch_size=1, max_wait=0.0, workers=1,
                       print_level=0) as svc:
        first = svc.submit(p=[1.5])
        assert spy.entered.wait(30)
        with pytest.raises(TimeoutError):
            svc.solve(p=[2.0], timeout=0.05)       # queued behind the blocked batch
        gate.set()
        assert first.result(60).status == "Solve_Succeeded"
    assert [size for _, size in spy.calls] == [1] and svc.stats.cancelled == 1


def test_ctrl_c_while_waiting_does_not_hang():
    script = textwrap.dedent("""
        import time, numpy as np
        from caspar_backend import Graph, NLPModel, Problem, SolverService
        g = Graph()
        x = g.var(0)
        P = Problem(NLPModel(g, (x - 1) ** 2, [], np.array([-5.0]), np.array([5.0]),
                             np.zeros(0), np.zeros(0), x0=np.zeros(1)))
        P.solve_batch = lambda **kw: time.sleep(3600)   # a batch that never ends
        svc = SolverService(P, max_batch_size=1, max_wait=0.0)
        print("waiting", flush=True)
        svc.solve()
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert proc.stdout.readline().strip() == "waiting"
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert "KeyboardInterrupt" in err and proc.returncode != 0


@pytest.mark.parametrize("options,error,match", [
    (dict(tolx=1e-6), OptionError, "unknown solver option 'tolx'"),
    (dict(tol=-1.0), OptionError, "'tol'"),
    (dict(device="tpu"), DeviceError, "unknown device 'tpu'")])
def test_bad_options_are_refused_at_construction(options, error, match):
    """Options and device are checked when the service is made, not failed on every
    request later; nothing is started for a refused service."""
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(error, match=match):
        SolverService(_rosenbrock_p(), **options)
    assert not {t.name for t in threading.enumerate()} - before
