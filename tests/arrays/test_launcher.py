"""Launches through the driver's cuLaunchKernel with a parameter buffer
(caspar_backend/arrays/launcher.py): the kernelParams array the driver receives points
at each argument's bits -- doubles, 64-bit integers, device pointers -- in order."""

import ctypes
import threading
import types

import numpy as np
import pytest

from caspar_backend.arrays import launcher as L


class _Dev:
    """A device array posing: ``data.ptr`` only."""

    def __init__(self, ptr):
        self.data = types.SimpleNamespace(ptr=ptr)


def _fake(stream_ptr=77):
    seen = []

    def launch_kernel(f, gx, gy, gz, bx, by, bz, smem, stream, params, extra):
        # what the driver reads: params is a void** of one pointer per parameter
        addrs = (ctypes.c_uint64 * 6).from_address(params)
        raw = [ctypes.c_uint64.from_address(a).value for a in addrs]
        seen.append(dict(f=f, grid=(gx, gy, gz), block=(bx, by, bz), smem=smem,
                         stream=stream, extra=extra, raw=raw))

    xp = types.SimpleNamespace(cuda=types.SimpleNamespace(
        get_current_stream=lambda: types.SimpleNamespace(ptr=stream_ptr),
        driver=types.SimpleNamespace(launchKernel=launch_kernel)))
    return xp, seen


def test_each_argument_lands_in_its_slot_with_its_bits():
    xp, seen = _fake()
    go = L.launcher(xp)
    args = (np.float64(-2.5), _Dev(0x7F0012345678), np.int64(-3), np.int32(7),
            _Dev(0x10), np.float64(1e300))
    go(0xABC, 12, 256, args)
    (s,) = seen
    assert s["f"] == 0xABC and s["grid"] == (12, 1, 1) and s["block"] == (256, 1, 1)
    assert s["smem"] == 0 and s["stream"] == 77 and s["extra"] == 0
    r = s["raw"]
    assert np.array([r[0]], np.uint64).view(np.float64)[0] == -2.5
    assert r[1] == 0x7F0012345678
    assert np.array([r[2]], np.uint64).view(np.int64)[0] == -3
    assert r[3] & 0xFFFFFFFF == 7                   # a 32-bit parameter: the low half
    assert r[4] == 0x10
    assert np.array([r[5]], np.uint64).view(np.float64)[0] == 1e300


def test_a_python_float_is_not_taken_for_a_pointer():
    xp, _ = _fake()
    with pytest.raises(AttributeError):        # the caller converts its scalars
        L.launcher(xp)(1, 1, 32, (2.0,))


def test_too_many_parameters_are_refused():
    xp, _ = _fake()
    with pytest.raises(ValueError, match="at most"):
        L.launcher(xp)(1, 1, 32, (np.float64(0),) * (L.SLOTS + 1))


def test_threads_fill_their_own_buffers():
    xp, _ = _fake()
    go = L.launcher(xp)
    other = []
    t = threading.Thread(target=lambda: other.append(go.buffer()))
    t.start()
    t.join()
    assert other[0] is not go.buffer() and go.buffer() is go.buffer()


def test_no_driver_no_launcher():
    assert L.launcher(types.SimpleNamespace()) is None
    assert L.launcher(types.SimpleNamespace(cuda=types.SimpleNamespace())) is None


def test_fast_calls_a_function_as_cupy_does_through_the_driver():
    xp, seen = _fake()
    fn = types.SimpleNamespace(ptr=0x55)
    go = L.fast(xp, fn)
    assert go.function is fn and L.launcher(xp) is L.launcher(xp)
    go((3,), (128,), (np.int32(9), _Dev(0x20)))
    assert seen[0]["f"] == 0x55 and seen[0]["grid"] == (3, 1, 1)
    assert seen[0]["block"] == (128, 1, 1) and seen[0]["raw"][1] == 0x20
    plain = lambda grid, block, args: None   # noqa: E731 - no CUfunction: left as it is
    assert L.fast(xp, plain) is plain
    assert L.fast(types.SimpleNamespace(), fn) is fn
