"""Chunks whose tasks raise, on an in-process Dask cluster (two worker threads), with
the chunk function replaced by one that fails on purpose:

* a memory error of a chunk of several instances: Dask's retries, then the chunk is cut
  in halves until the pieces pass; the result is the single-process one, bit for bit;
* a memory error of a one-instance chunk: that instance is 'Insufficient_Memory';
* any other error, every attempt: the chunk's instances are 'Unrecoverable_Exception',
  path 'failed', the error as reason and in the message; every other instance has its
  own result, and nothing is missing.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from caspar_backend.batch import chunk  # noqa: E402
from tests.batch.problems import build  # noqa: E402
from tests.batch.same import assert_identical  # noqa: E402

X0_IK = [0.1, 0.2, 0.3]
#: the target that marks the instance whose chunk fails
POISON = 9.0


@pytest.fixture(scope="module")
def client():
    with distributed.Client(n_workers=2, threads_per_worker=1, processes=False,
                            dashboard_address=None) as c:
        yield c


@pytest.fixture(scope="module")
def ik():
    return build("ik")[0]


class Attempts:
    """What the chunk function met: ``sizes``, every call's chunk size; ``error(size,
    P)``, the exception to raise before solving (or None).  Module state: the task's
    function is sent to the workers by reference (its name), so it reads it here."""

    lock = threading.Lock()
    sizes: list = []
    error = None


def failing_chunk(problem, digest, rows, size, device, options):
    """:func:`caspar_backend.batch.chunk.solve_chunk` after ``Attempts.error``."""
    with Attempts.lock:
        Attempts.sizes.append(size)
    exc = Attempts.error(size, np.broadcast_to(rows["p"], (size, 2)))
    if exc is not None:
        raise exc
    return REAL_CHUNK(problem, digest, rows, size, device, options)


REAL_CHUNK = chunk.solve_chunk


@pytest.fixture
def attempts(monkeypatch):
    """The chunk function replaced by :func:`failing_chunk`; fresh :class:`Attempts`."""
    monkeypatch.setattr(Attempts, "sizes", [])
    monkeypatch.setattr(Attempts, "error", staticmethod(lambda size, P: None))
    monkeypatch.setattr(chunk, "solve_chunk", failing_chunk)
    return Attempts


def targets(B, seed=0):
    from benchmarks.bench_small import ik_targets

    return ik_targets(B, seed=seed)


def test_memory_errors_halve_the_chunk_until_it_passes(client, ik, attempts):
    attempts.error = lambda size, P: MemoryError("4 instances fit") if size > 4 else None
    T = targets(16)
    ref = ik.solve_batch(x0=X0_IK, p=T, print_level=0)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0, client=client, chunk_size=16,
                         retries=1)
    assert_identical(res, ref)
    # 16 twice (a retry), each 8 twice, then four chunks of 4
    assert sorted(attempts.sizes) == [4] * 4 + [8] * 4 + [16] * 2
    split = [c for c in res.extra["chunks"] if c["error"]]
    assert [(c["start"], c["stop"]) for c in split] == [(0, 16), (0, 8), (8, 16)]
    assert all(c["error"].startswith("split in two after MemoryError") for c in split)


def test_a_one_instance_chunk_out_of_memory_is_insufficient_memory(client, ik, attempts):
    T = targets(5)
    T[3] = POISON
    attempts.error = lambda size, P: (MemoryError("no room") if (P == POISON).any()
                                      else None)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0, client=client, chunk_size=4,
                         retries=0)
    assert res.status[3] == "Insufficient_Memory" and res.path[3] == "failed"
    assert res.reason[3] == "MemoryError: no room" and "[3, 4)" in res.message[3]
    assert np.isnan(res.x[3]).all() and res.iterations[3] == 0
    assert res.extra["worker"][3] == "" and res.extra["device"][3] == ""
    ok = [0, 1, 2, 4]
    ref = ik.solve_batch(x0=X0_IK, p=T[ok], print_level=0)
    np.testing.assert_array_equal(res.x[ok], ref.x)
    assert [res.status[b] for b in ok] == ref.status


def test_a_chunk_that_always_raises_gives_its_instances_an_error_status(client, ik,
                                                                        attempts):
    T = targets(12, seed=1)
    T[5] = POISON
    attempts.error = lambda size, P: (RuntimeError("worker-side bug")
                                      if (P == POISON).any() else None)
    res = ik.solve_batch(x0=X0_IK, p=T, print_level=0, client=client, chunk_size=4,
                         retries=2)
    # chunk [4, 8) ran three times (two retries); the others once
    assert sorted(attempts.sizes) == [4] * 5
    bad = [4, 5, 6, 7]
    assert [res.status[b] for b in bad] == ["Unrecoverable_Exception"] * 4
    assert {res.path[b] for b in bad} == {"failed"}
    assert {res.reason[b] for b in bad} == {"RuntimeError: worker-side bug"}
    assert all("Instances [4, 8) failed on the cluster" in res.message[b] for b in bad)
    assert not res.success[bad].any()
    ok = [0, 1, 2, 3, 8, 9, 10, 11]
    ref = ik.solve_batch(x0=X0_IK, p=T[ok], print_level=0)
    np.testing.assert_array_equal(res.x[ok], ref.x)
    np.testing.assert_array_equal(res.iterations[ok], ref.iterations)
    assert [res.status[b] for b in ok] == ref.status
    failed = [c for c in res.extra["chunks"] if c["error"]]
    assert [(c["start"], c["stop"], c["error"]) for c in failed] == \
        [(4, 8, "RuntimeError: worker-side bug")]
