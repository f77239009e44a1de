"""Batched scatter-adds (:mod:`caspar_backend.batch.scatter`): the host's rank passes and
the device kernel (``kernels/segment_sum.cu``, compiled here for the host with g++) add
each target's inputs in input order -- bit for bit what a sequential loop over the
inputs (``numpy.bincount``'s order) gives, with and without accumulation, for targets
with no input, one, or many."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from caspar_backend.batch.scatter import ScatterSum

from tests.support.host_cuda import host_library

from .ldl_support import ROOT

_HARNESS = r"""
struct caspar_dim3 { unsigned x, y, z; };
static caspar_dim3 blockIdx, blockDim, threadIdx;
#define __global__
#include "segment_sum.cu"
extern "C" void caspar_set_thread(unsigned block, unsigned dim, unsigned thread) {
    blockIdx.x = block; blockDim.x = dim; threadIdx.x = thread;
}
"""


@pytest.fixture(scope="module")
def host_kernel(tmp_path_factory):
    so = host_library(tmp_path_factory, "segment_sum", _HARNESS, ROOT / "kernels")
    fn = so.caspar_segment_sum_rows

    def launch(grid, block, args):
        conv = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray)
                else ctypes.c_longlong(int(a)) if isinstance(a, np.int64)
                else ctypes.c_int(int(a)) for a in args]
        for b in range(grid[0]):
            for t in range(block[0]):
                so.caspar_set_thread(b, block[0], t)
                fn(*conv)
    return launch


def _sequential(v, idx, size, out0=None):
    out = np.zeros((v.shape[0], size)) if out0 is None else out0.copy()
    for k, j in enumerate(idx):
        out[:, j] += v[:, k]
    return out


@pytest.mark.parametrize("accumulate", [False, True])
def test_passes_and_kernel_add_in_input_order(accumulate, host_kernel):
    rng = np.random.default_rng(3)
    size, B = 40, 7
    idx = np.concatenate([rng.integers(0, 30, 300), [35]])    # 30..34, 36..39: none
    v = rng.standard_normal((B, idx.size)) * 10.0 ** rng.integers(-8, 8, (B, idx.size))
    out0 = rng.standard_normal((B, size))
    want = _sequential(v, idx, size, out0 if accumulate else None)
    for s in (ScatterSum(np, idx, size), ScatterSum(np, idx, size, kernel=host_kernel)):
        out = out0.copy()
        assert s(v, out, accumulate=accumulate) is out
        assert np.array_equal(out, want)


def test_kernel_takes_a_strided_input_and_rejects_a_bad_output(host_kernel):
    idx = np.array([2, 0, 2, 1, 2])
    v = np.arange(30.0).reshape(3, 10)[:, ::2]                  # (3, 5), not contiguous
    s = ScatterSum(np, idx, 3, kernel=host_kernel)
    assert np.array_equal(s(v, np.zeros((3, 3))), _sequential(v, idx, 3))
    with pytest.raises(ValueError, match="same rows"):
        s(v, np.zeros((2, 3)))
    assert np.array_equal(ScatterSum(np, idx[:0], 3, kernel=host_kernel)(
        v[:, :0], np.ones((3, 3))), np.zeros((3, 3)))
