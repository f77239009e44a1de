"""The fused kernels' reusable result arrays (caspar_backend/arrays/out_pool.py): an array
is handed out again only when nothing outside the pool references it or a view of it."""

import threading

import numpy as np
import pytest

from caspar_backend.arrays import out_pool
from caspar_backend.arrays.out_pool import OutputPool

pytestmark = pytest.mark.skipif(not out_pool.ENABLED, reason="free-threaded: no reuse")


class _CountingXp:
    """NumPy's ``empty``, counted."""

    def __init__(self):
        self.made = 0

    def empty(self, shape, dtype):
        self.made += 1
        return np.empty(shape, dtype=dtype)


def test_an_array_nobody_holds_is_reused():
    xp = _CountingXp()
    pool = OutputPool(xp)
    a = pool.take("op", (3,), np.float64)
    addr = a.ctypes.data
    del a
    b = pool.take("op", (3,), np.float64)
    assert b.ctypes.data == addr and xp.made == 1


def test_a_held_array_or_view_is_not_handed_out_again():
    xp = _CountingXp()
    pool = OutputPool(xp)
    a = pool.take("op", (4,), np.float64)
    b = pool.take("op", (4,), np.float64)
    assert b is not a and xp.made == 2
    view = a[1:]
    del a
    c = pool.take("op", (4,), np.float64)       # a's view still holds it
    assert c is not b and c.base is not view.base and xp.made == 3
    held = [pool.take("op", (4,), np.float64) for _ in range(out_pool.SLOTS)]
    assert xp.made == 3 + out_pool.SLOTS        # every slot busy: new, unpooled arrays
    assert pool.held() == out_pool.SLOTS
    assert len({id(h) for h in held}) == len(held)


def test_keys_do_not_share_arrays_and_the_pools_stay_bounded(monkeypatch):
    xp = _CountingXp()
    pool = OutputPool(xp)
    pool.take("f", (2,), np.float64)
    g = pool.take("g", (2,), np.float64)
    assert xp.made == 2 and g.shape == (2,)
    monkeypatch.setattr(out_pool, "MAX_KEYS", 3)
    for k in range(10):
        pool.take(("op", k), (1,), np.float64)
    assert pool.held() <= 3


def test_each_thread_has_its_own_arrays():
    xp = _CountingXp()
    pool = OutputPool(xp)
    mine = pool.take("op", (5,), np.float64).ctypes.data
    theirs = []
    t = threading.Thread(target=lambda: theirs.append(pool.take("op", (5,), np.float64)))
    t.start()
    t.join()
    assert theirs[0].ctypes.data != mine and xp.made == 2


def test_the_free_count_matches_this_interpreter():
    import sys

    pool = [np.empty(1)]
    alone = sys.getrefcount(pool[0])       # (not inside assert: pytest keeps the value)
    held = pool[0]
    with_one_more = sys.getrefcount(pool[0])
    del held
    assert (alone, with_one_more) == (out_pool.FREE, out_pool.FREE + 1)
