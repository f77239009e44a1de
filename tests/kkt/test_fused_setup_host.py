"""The CUDA source of the setup kernels (``relax_bounds``, ``push_bounds``,
``row_abs_max``:
caspar_backend/arrays/fused_setup.py), compiled for the host with g++ (the device
intrinsics defined as their host meaning, no contraction of products into sums) and
run over every entry, equals the NumPy references bit for bit, infinite and crossing
bounds included -- the source's semantics checked where no GPU is; ``pytest -m gpu``'s
test_kernel_equals_reference_on_gpu checks the device build."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from caspar_backend.arrays import fused, fused_cuda
from tests.support.host_cuda import host_library

from .test_fused_kernels import _bound_pair, _bound_sides, _row_plan

_HARNESS = r"""
#include <cmath>
#include <cstring>
struct caspar_dim3 { unsigned x, y, z; };
static caspar_dim3 blockIdx = {0, 0, 0}, blockDim = {1, 1, 1}, threadIdx = {0, 0, 0},
                   gridDim = {1, 1, 1};
#define __global__
#define __shared__ static
#define __syncthreads()
#define __threadfence()
static inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p += v; return o; }
using std::fabs; using std::log; using std::sqrt;
"""


@pytest.fixture(scope="module")
def host_module(tmp_path_factory):
    ops = {name: fused.SPECS[name] for name in ("relax_bounds", "push_bounds", "row_abs_max")}
    src = _HARNESS + fused_cuda.module_source(ops).split('extern "C" __global__ void '
                                                          'caspar_pack')[0]
    return host_library(tmp_path_factory, "fused_setup", src)


def _run(so, name, args):
    """Kernel ``name`` over all entries: one host thread, one block (the grid-stride loop
    visits every i); float arguments as doubles, arrays by pointer, then n."""
    conv = [ctypes.c_void_p(a.ctypes.data) if isinstance(a, np.ndarray)
            else ctypes.c_double(a) for a in args]
    n = args[0].size if name == "push_bounds" else args[-1].size
    getattr(so, f"caspar_{name}")(*conv, ctypes.c_longlong(n))


@pytest.mark.parametrize("k", [1, 8, 1000])
def test_relax_bounds_source_equals_reference(host_module, k):
    xl, gl, xu, gu, fs, dci = _bound_sides(k)
    args = (xl, gl, xu, gu, fs, dci, float(len(xl)), float(len(gl)), 1e-8, 1e-4)
    want, got = np.full(2 * k, np.nan), np.full(2 * k, np.nan)
    fused.call(np, "relax_bounds", *args, want)
    _run(host_module, "relax_bounds", args + (got,))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("k", [1, 8, 1000])
def test_push_bounds_source_equals_reference(host_module, k):
    wL, wU = _bound_pair(k)
    v = np.random.default_rng(k).normal(size=k) * 100
    v[::7] = np.nan
    want, got = v.copy(), v.copy()
    fused.call(np, "push_bounds", wL, wU, 1e-2, 0.5, want)
    _run(host_module, "push_bounds", (wL, wU, 1e-2, 0.5, got))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("m", [1, 8, 1000])
def test_row_abs_max_source_equals_reference(host_module, m):
    jv, perm, indptr = _row_plan(m)
    want, got = np.full(m, -1.0), np.full(m, -1.0)
    fused.call(np, "row_abs_max", jv, perm, indptr, want)
    _run(host_module, "row_abs_max", (jv, perm, indptr, got))
    np.testing.assert_array_equal(got, want)
