"""Each thread's own CUDA stream for the batch kernel (caspar_backend.compiled.cuda.streams):
batches solved by different threads at once overlap on the GPU and each equals the same
batch solved alone, bit for bit.  Without a GPU: numba-cuda's handle of the legacy
default stream."""
import threading
import types

import numpy as np
import pytest

from caspar_backend.compiled.cuda import streams


def test_legacy_default_stream_is_numbas_default():
    assert streams.launch_stream(types.SimpleNamespace(ptr=0)) == 0


@pytest.mark.gpu
def test_each_thread_has_its_own_non_blocking_stream():
    cp = pytest.importorskip("cupy")
    seen = []

    def take():
        s = streams.thread_stream()
        seen.append((s, s is streams.thread_stream()))

    ts = [threading.Thread(target=take) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert all(same for _, same in seen)
    assert len({s.ptr for s, _ in seen}) == 3 and all(s.ptr for s, _ in seen)
    assert all(s != cp.cuda.Stream.null for s, _ in seen)


@pytest.mark.gpu
def test_concurrent_batches_equal_the_batch_alone(monkeypatch):
    pytest.importorskip("numba_cuda")
    pytest.importorskip("casadi")
    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch import solve as batch_solve

    monkeypatch.setattr(batch_solve, "KERNEL_ON_CUDA", True)
    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    x0 = np.array([0.1, 0.2, 0.3])
    targets = [arm_targets(64, seed=s) for s in range(6)]

    def solve(T):
        r = problem.solve_batch(x0=x0, p=T, print_level=0, device="cuda")
        assert set(r.path) == {"kernel"}
        return np.asarray(r.status), np.asarray(r.iterations), np.asarray(r.x)

    alone = [solve(T) for T in targets]
    together = [None] * len(targets)
    errors = []

    def worker(i):
        try:
            for _ in range(3):
                together[i] = solve(targets[i])
        except Exception as exc:        # reported below, with the thread's index
            errors.append((i, exc))

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(len(targets))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for a, b in zip(alone, together):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
