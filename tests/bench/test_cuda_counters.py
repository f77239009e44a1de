"""benchmarks/cuda_counters: the preloaded library counts a stand-in libcuda's launches,
copies and synchronizations on each route a process takes to them (dlsym on a dlopen'ed
library, cuGetProcAddress) and the CUDA runtime's copies and synchronizations (a
stand-in libcudart loaded privately, as CuPy's is), and tells a unified-address copy's
direction by the driver's pointer attribute, without a GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from benchmarks.cuda_counters import build, snapshot

FAKE = r"""
#include <string.h>
int cuLaunchKernel(void* f, unsigned a, unsigned b, unsigned c, unsigned d, unsigned e,
                   unsigned g, unsigned h, void* s, void** p, void** x) { return 7; }
int cuStreamSynchronize(void* s) { return 5; }
int cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, unsigned long n, void* st) { return 3; }
int cuMemcpyAsync(unsigned long long d, unsigned long long s, unsigned long n, void* st) {
    return 4;
}
/* the stand-in's device memory: addresses from 1 << 40; other pointers are unknown */
int cuPointerGetAttribute(void* data, int attr, unsigned long long ptr) {
    if (attr != 2 || ptr < (1ULL << 40)) return 1;
    *(unsigned*)data = 2;
    return 0;
}
int cuGetProcAddress_v2(const char* sym, void** pfn, int v, unsigned long long f, void* st) {
    if (!strcmp(sym, "cuStreamSynchronize")) { *pfn = (void*)cuStreamSynchronize; return 0; }
    if (!strcmp(sym, "cuMemcpyDtoHAsync")) { *pfn = (void*)cuMemcpyDtoHAsync_v2; return 0; }
    return 1;
}
"""

FAKE_RT = r"""
int cudaMemcpyAsync(void* d, const void* s, unsigned long n, int kind, void* st) { return 6; }
int cudaStreamSynchronize(void* st) { return 8; }
"""

CLIENT = """
import ctypes, sys
sys.path.insert(0, {root!r})
from benchmarks.cuda_counters import snapshot
lib = ctypes.CDLL({fake!r})
before = snapshot()
assert lib.cuLaunchKernel(None, 1, 1, 1, 1, 1, 1, 0, None, None, None) == 7
proc = {{}}
for name in (b"cuStreamSynchronize", b"cuMemcpyDtoHAsync"):
    p = ctypes.c_void_p()
    assert lib.cuGetProcAddress_v2(name, ctypes.byref(p), 12000, 0, None) == 0
    proc[name] = p.value
sync = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(proc[b"cuStreamSynchronize"])
copy = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t,
                        ctypes.c_void_p)(proc[b"cuMemcpyDtoHAsync"])
assert sync(None) == 5 and sync(None) == 5 and copy(None, 0, 8, None) == 3
dev, host = 1 << 41, 4096
ucopy = lib.cuMemcpyAsync
ucopy.argtypes = [ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p]
assert ucopy(host, dev, 8, None) == 4       # device -> host: a read
assert ucopy(dev, host, 8, None) == 4       # host -> device
rt = ctypes.CDLL({fake_rt!r})                # the runtime, as CuPy calls it
rcopy = rt.cudaMemcpyAsync
rcopy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                  ctypes.c_void_p]
assert rcopy(host, dev, 8, 4, None) == 6     # cudaMemcpyDefault, device -> host: a read
assert rcopy(host, dev, 8, 2, None) == 6     # cudaMemcpyDeviceToHost: a read
assert rcopy(dev, host, 8, 1, None) == 6     # cudaMemcpyHostToDevice
assert rt.cudaStreamSynchronize(None) == 8
after = snapshot()
print({{k: None if after[k] is None else after[k] - (before[k] or 0) for k in after}})
"""


@pytest.mark.skipif(shutil.which(os.environ.get("CC", "cc")) is None, reason="no C compiler")
def test_counts_through_dlsym_and_get_proc_address(tmp_path):
    lib = build(tmp_path)
    fake = tmp_path / "libfakecuda.so"
    (tmp_path / "fake.c").write_text(FAKE)
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", str(tmp_path / "fake.c"),
                    "-o", str(fake)], check=True)
    # the runtime's stand-in, named as libcudart so that the wrappers find its definitions
    fake_rt = tmp_path / "libcudart.so.99"
    (tmp_path / "fake_rt.c").write_text(FAKE_RT)
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC",
                    str(tmp_path / "fake_rt.c"), "-o", str(fake_rt)], check=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", CLIENT.format(root=root, fake=str(fake), fake_rt=str(fake_rt))],
                         env=dict(os.environ, LD_PRELOAD=str(lib)), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str({"launches": 1, "reads": 4, "default_copies": 2,
                                      "syncs": 3})


def test_snapshot_without_the_library():
    assert snapshot() is None
