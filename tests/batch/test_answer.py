"""The service's future (:mod:`caspar_backend.batch.answer`): ``concurrent.futures.Future``'s
API and rules, and a batch's waiters all woken by its chain.

* states: cancel only while pending (True again once cancelled, False once running or
  done); ``set_running_or_notify_cancel`` as an executor's worker uses it; a second
  answer raises InvalidStateError;
* ``result``/``exception`` with and without timeouts (<= 0: no wait), CancelledError,
  the answer's exception re-raised;
* ``add_done_callback`` before and after the answer, errors logged, not raised;
* ``concurrent.futures.wait``/``as_completed`` and ``asyncio.wrap_future`` work on it;
* :func:`settle`: many threads blocked on the futures of one batch (some with several
  waiters, some with timeouts that expire first, some not waiting at all) are all woken.
"""

from __future__ import annotations

import asyncio
import concurrent.futures as cf
import threading
import time

import pytest
from caspar_backend.batch.answer import Answer, settle


def _running(k: int) -> list:
    out = [Answer() for _ in range(k)]
    assert all(a.set_running_or_notify_cancel() for a in out)
    return out


def test_is_a_future_with_its_states():
    a = Answer()
    assert isinstance(a, cf.Future)
    assert not a.done() and not a.running() and not a.cancelled()
    assert a.cancel() and a.cancel() and a.cancelled() and a.done()
    assert not a.set_running_or_notify_cancel()        # an executor skips it
    with pytest.raises(cf.CancelledError):
        a.result()
    with pytest.raises(cf.CancelledError):
        a.exception(0)
    b = Answer()
    assert b.set_running_or_notify_cancel() and b.running()
    assert not b.cancel()
    with pytest.raises(RuntimeError):
        b.set_running_or_notify_cancel()
    b.set_result(7)
    assert b.done() and not b.cancel() and b.result() == 7 and b.exception() is None
    with pytest.raises(cf.InvalidStateError):
        b.set_result(8)
    with pytest.raises(cf.InvalidStateError):
        settle([b], [9])
    assert "finished" in repr(b)


def test_result_timeouts_and_exceptions():
    a = Answer()
    t0 = time.monotonic()
    with pytest.raises(cf.TimeoutError):
        a.result(0.05)
    assert time.monotonic() - t0 >= 0.04
    for t in (0, -1):                                  # no wait
        with pytest.raises(cf.TimeoutError):
            a.result(t)
        with pytest.raises(cf.TimeoutError):
            a.exception(t)
    a.set_running_or_notify_cancel()
    boom = ValueError("bad")
    settle([a], exception=boom)
    assert a.exception() is boom
    with pytest.raises(ValueError, match="bad"):
        a.result(0)


def test_done_callbacks():
    seen = []
    a, b = _running(2)
    a.add_done_callback(lambda f: seen.append(("a", f.result())))
    a.add_done_callback(lambda f: 1 / 0)               # logged, the others still run
    a.add_done_callback(lambda f: seen.append(("a2", f.result())))
    settle([a, b], [1, 2])
    b.add_done_callback(lambda f: seen.append(("b", f.result())))   # already done: now
    assert seen == [("a", 1), ("a2", 1), ("b", 2)]
    c = Answer()
    c.add_done_callback(lambda f: seen.append(("c", f.cancelled())))
    c.cancel()
    assert seen[-1] == ("c", True)


def test_wait_as_completed_and_asyncio():
    fs = _running(3)

    def later():
        time.sleep(0.05)
        settle(fs[:2], ["x", "y"])
        time.sleep(0.05)
        settle(fs[2:], exception=KeyError("k"))

    threading.Thread(target=later).start()
    done, not_done = cf.wait(fs, timeout=30, return_when=cf.FIRST_COMPLETED)
    assert done and len(done) + len(not_done) == 3
    assert {f for f in cf.as_completed(fs, timeout=30)} == set(fs)
    done, not_done = cf.wait(fs, timeout=30)
    assert len(done) == 3 and not not_done
    assert [f.result() for f in fs[:2]] == ["x", "y"]
    # a cancelled future is done for wait() once the worker has seen it
    c = Answer()
    c.cancel()
    c.set_running_or_notify_cancel()
    assert cf.wait([c], timeout=0).done == {c}

    async def main():
        a = Answer()
        a.set_running_or_notify_cancel()
        threading.Timer(0.02, lambda: settle([a], [5])).start()
        return await asyncio.wrap_future(a)

    assert asyncio.run(main()) == 5


def test_settle_wakes_every_waiter():
    n = 48
    fs = _running(n)
    got, errors = {}, []

    def waiter(i, tag, timeout):
        try:
            started.wait()
            got[i, tag] = fs[i].result(timeout)
        except cf.TimeoutError:
            got[i, tag] = "timeout"
        except BaseException as exc:        # noqa: BLE001
            errors.append(exc)

    threads = []
    for i in range(n):
        if i % 7 == 3:
            continue                        # nobody waits on these
        timeout = 0.01 if i % 5 == 0 else None      # these give up first
        threads.append(threading.Thread(target=waiter, args=(i, "a", timeout)))
        if i % 4 == 0:                      # a second waiter on the same future
            threads.append(threading.Thread(target=waiter, args=(i, "b", None)))
    started = threading.Barrier(len(threads) + 1)
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.1)
    settle(fs, list(range(n)))
    for t in threads:
        t.join(30)
        assert not t.is_alive()
    assert not errors
    for (i, tag), v in got.items():
        assert v == i or (v == "timeout" and i % 5 == 0 and tag == "a")
    assert all(f.result(0) == i for i, f in enumerate(fs))
