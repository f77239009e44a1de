"""The CUDA batch kernel compiles for the H200 (sm_90) on a machine without a GPU:
numba-cuda types and lowers the global kernel and every kernel it calls (the CPU
kernels' source, :mod:`caspar_backend.compiled.cuda.retarget`), NVVM turns it into PTX
and ptxas into SASS.  This catches what only the GPU machine would otherwise show -- a
construct numba-cuda cannot type, a libdevice call NVVM rejects -- before device time is
spent on it (~40 s NVVM + ~20 s ptxas on the 2-core VM; marked slow).

Without a GPU, numba-cuda would still ask the driver for the device's compute capability
and NVVM for libdevice: :func:`caspar_backend.compiled.cuda.offline.target` answers both
(sm_90; libdevice and ptxas from the CUDA toolkit in CUDA_HOME or /usr/local/cuda).
Skips where numba-cuda, libNVVM, libdevice or ptxas is missing.

    pytest -m slow tests/compiled/test_cuda_compiles.py
"""
from pathlib import Path

import pytest

from caspar_backend.compiled.cuda import offline

pytestmark = pytest.mark.slow

CC = offline.CC


def _toolkit() -> Path:
    root = offline.toolkit()
    if root is None:
        pytest.skip("no CUDA toolkit with libdevice (CUDA_HOME, /usr/local/cuda)")
    return root


@pytest.fixture(scope="module")
def rows_ptx():
    """The rows kernel's PTX for sm_90, compiled once for the module's tests."""
    pytest.importorskip("numba_cuda")
    root = _toolkit()
    from numba.cuda.cudadrv.error import NvvmSupportError

    with offline.target(CC, root):
        try:
            return offline.ptx(False, CC)
        except NvvmSupportError as exc:     # libNVVM itself missing
            pytest.skip(f"libNVVM not loadable: {exc}")


def test_rows_kernel_compiles_to_sm90_without_a_gpu(rows_ptx):
    root = _toolkit()
    if offline.ptxas_path(root) is None:
        pytest.skip("no ptxas")
    assert "_solve_rows" in rows_ptx
    assert len(offline.assemble(rows_ptx, CC, root)) > 0


def test_barrier_update_loop_has_one_exit(rows_ptx):
    """The barrier update's loop (solve_instance's inner loop that calls errors) leaves
    through one block.  With two (9af6051 .. a1cf643: its at-the-floor end threaded
    into a second exit), the threads of a warp that left it on different passes ran
    apart for the rest of their solves: IK 10^4 on an H100 144 ms against 31 ms, the
    time per iteration growing with the instances per warp (docs/compiled-ipm-cuda.md)."""
    from tests.support.ptx_cfg import loops

    found = loops(rows_ptx, "3ipm14solve_instance")
    barrier = [lp for lp in found[1:] if any("10quantities6errors" in f for f in lp.callees)]
    assert len(barrier) == 1, [(len(lp.blocks), len(lp.exits)) for lp in barrier]
    assert len(barrier[0].exits) == 1, sorted(barrier[0].exits)


def test_every_retargeted_kernel_compiled_once(rows_ptx):
    """A retargeted kernel is compiled once per argument types, not once per constant its
    callers pass (retarget._unliteral_calls): numba-cuda typed a constant argument as
    Literal[int](value), and the kernel had 212 compilations of 146 functions (the
    pairwise sum's levels twice, fold_max ten times, ...), a copy of each in the PTX."""
    from caspar_backend.compiled.cuda import retarget

    copies = {d.py_func.__name__: len(d.overloads) for d in set(retarget._device.values())
              if len(getattr(d, "overloads", {})) > 1}
    assert not copies, copies
