"""compiled/deadline.py: the thread that sets a compiled solve's stop slot when its time
limit passes."""
import time

import numpy as np

from caspar_backend.compiled import deadline


def _wait_for(flag, value, seconds=2.0):
    end = time.perf_counter() + seconds
    while flag[0] != value and time.perf_counter() < end:
        time.sleep(0.001)
    return flag[0]


def test_wall_limit_sets_the_slot_after_the_limit():
    flag = np.zeros(1, np.int64)
    t0 = time.perf_counter()
    w = deadline.watch(flag, t0, time.process_time(), 0.05, 1e20)
    assert flag[0] == 0
    assert _wait_for(flag, deadline.WALL) == deadline.WALL
    assert time.perf_counter() - t0 > 0.05
    deadline.unwatch(w)


def test_cpu_limit_sets_the_slot_once_the_process_used_it():
    flag = np.zeros(1, np.int64)
    cpu0 = time.process_time()
    w = deadline.watch(flag, time.perf_counter(), cpu0, 1e20, 0.05)
    x = 0.0
    while flag[0] == 0 and time.process_time() - cpu0 < 2.0:      # burn CPU time
        x += sum(i * i for i in range(1000))
    assert flag[0] == deadline.CPU and time.process_time() - cpu0 > 0.05
    deadline.unwatch(w)


def test_unwatched_slot_is_never_written_and_long_limits_arm_nothing():
    flag = np.zeros(1, np.int64)
    w = deadline.watch(flag, time.perf_counter(), time.process_time(), 0.02, 1e6)
    deadline.unwatch(w)
    time.sleep(0.06)
    assert flag[0] == 0
    assert deadline.watch(flag, time.perf_counter(), time.process_time(), 1e20, 1e6) is None


def test_a_passed_limit_is_set_at_once():
    flag = np.zeros(1, np.int64)
    deadline.watch(flag, time.perf_counter() - 1.0, time.process_time(), 0.5, 1e20)
    assert flag[0] == deadline.WALL
    flag[0] = 0
    deadline.watch(flag, time.perf_counter(), time.process_time() - 1.0, 1e20, 1e-12)
    assert flag[0] == deadline.CPU


def _child_watch(q):
    flag = np.zeros(1, np.int64)
    deadline.watch(flag, time.perf_counter(), time.process_time(), 0.02, 1e20)
    q.put(int(_wait_for(flag, deadline.WALL)))


def test_a_forked_child_gets_its_own_watch_thread():
    """After a fork the child has no watch thread (only the forking thread survives):
    its first watch starts one."""
    import multiprocessing as mp

    if "fork" not in mp.get_all_start_methods():
        import pytest

        pytest.skip("no fork on this platform")
    flag = np.zeros(1, np.int64)
    w = deadline.watch(flag, time.perf_counter(), time.process_time(), 0.01, 1e20)
    _wait_for(flag, deadline.WALL)           # the parent's thread runs
    deadline.unwatch(w)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_watch, args=(q,))
    p.start()
    got = q.get(timeout=10)
    p.join(10)
    assert got == deadline.WALL and p.exitcode == 0
