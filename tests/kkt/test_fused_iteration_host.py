"""The CUDA source of the iteration's fused ops that replaced a sequence of launches
(``step_duals``, ``lagrangian_residual``, ``barrier_gradient``, ``bound_sigma``,
``constraint_residual``, ``scale_pad``, ``mul_pad``: caspar_backend/arrays/fused.py),
compiled for the host with g++ (one thread runs the grid-stride loop over every entry;
no contraction of products into sums) equals the NumPy references -- the former
sequences -- bit for bit, with empty bound sets and entries bounded on both sides: the
kernels' inverse maps checked where no GPU is.  ``pytest -m gpu``'s
test_kernel_equals_reference_on_gpu checks the device build."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from caspar_backend.arrays import fused, fused_cuda
from caspar_backend.solver.structure import inverse_map
from tests.support.host_cuda import host_library

from .test_fused_setup_host import _HARNESS

OPS = ("step_duals", "lagrangian_residual", "barrier_gradient", "bound_sigma",
       "constraint_residual", "scale_pad", "mul_pad")
RNG = np.random.default_rng(43)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    src = (_HARNESS + "static inline double __dmul_rn(double a, double b) { return a * b; }\n"
           + fused_cuda.module_source({n: fused.SPECS[n] for n in OPS})
           .split('extern "C" __global__ void caspar_pack')[0])
    return host_library(tmp_path_factory, "fused_iteration", src)


def _run(so, name, args):
    """The kernel on ``args`` (the reference's), as a launch passes them: arrays by
    pointer, scalars as doubles, a new output, the sizes of a multi-size op, then n."""
    spec = fused.SPECS[name]
    kinds = [p.split()[0] for p in spec.params.split(",")]
    names = [p.split()[1] for p in spec.params.split(",")]
    conv = [ctypes.c_double(a) if k == "scalar" else ctypes.c_void_p(a.ctypes.data)
            for k, a in zip(kinds, args)]
    sizes = [args[names.index(q)].size for q in spec.sizes()]
    n = max(sizes)
    out = None
    if spec.out:
        out = np.full(n, np.nan)
        conv.append(ctypes.c_void_p(out.ctypes.data))
    if len(sizes) > 1:
        conv += [ctypes.c_longlong(s) for s in sizes]
    getattr(so, f"caspar_{name}")(*conv, ctypes.c_longlong(n))
    return out


def _bounds(nw, both):
    """iL, iU over nw entries, ``both`` of them bounded on both sides, and their inverse
    maps."""
    iL = np.sort(RNG.choice(nw, size=nw // 2, replace=False)).astype(np.int64)
    rest = np.setdiff1d(np.arange(nw), iL)
    iU = np.sort(np.concatenate([iL[:both], rest[:nw // 4]])).astype(np.int64)
    return iL, iU, inverse_map(iL, nw), inverse_map(iU, nw)


def _cases(name, nw, both):
    iL, iU, posL, posU = _bounds(nw, both)
    nL, nU = len(iL), len(iU)
    pos_ = lambda k: RNG.uniform(0.1, 2.0, size=k)     # noqa: E731
    g = RNG.normal(size=nw)
    if name == "step_duals":
        m = nw // 3
        return [(0.3, RNG.normal(size=m), 0.7, RNG.normal(size=nL), pos_(nL),
                 RNG.normal(size=nU), pos_(nU), 0.2, 10.0, clip, np.array([ok]),
                 RNG.normal(size=m), pos_(nL), pos_(nU))
                for clip, ok in ((0.0, 1.0), (1.0, 1.0), (1.0, 0.0))]
    if name == "lagrangian_residual":
        return [(g, RNG.normal(size=nw), iL, pos_(nL), iU, pos_(nU), posL, posU)]
    if name == "barrier_gradient":
        return [(g, iL, pos_(nL), (RNG.uniform(size=nL) > 0.5).astype(float), iU, pos_(nU),
                 (RNG.uniform(size=nU) > 0.5).astype(float), -0.1, 1e-5, 0.1, -1e-5, posL,
                 posU)]
    if name == "bound_sigma":
        return [(iL, pos_(nL), pos_(nL), iU, pos_(nU), pos_(nU), posL, posU,
                 np.full(nw, np.nan))]
    if name == "constraint_residual":
        slack = np.sort(RNG.choice(nw, size=nw // 3, replace=False)).astype(np.int64)
        return [(pos_(nw), g, RNG.normal(size=nw), slack, RNG.normal(size=len(slack)),
                 inverse_map(slack, nw), np.full(nw, np.nan))]
    if name == "scale_pad":
        return [(0.37, RNG.normal(size=nw // 2), pad, np.full(nw, np.nan))
                for pad in (0.0, -1.0)]
    return [(pos_(nw // 2), RNG.normal(size=nw // 2), -1.0, np.full(nw, np.nan))]


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("nw,both", [(1, 0), (6, 2), (257, 40), (1000, 0)])
def test_iteration_kernel_source_equals_former_sequence(lib, name, nw, both):
    for args in _cases(name, nw, both):
        host = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        want = fused.call(np, name, *host)
        dev = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        got = _run(lib, name, dev)
        if fused.SPECS[name].out:
            assert np.array_equal(got, want), name
        else:
            outs = [j for j, p in enumerate(fused.SPECS[name].params.split(","))
                    if p.split()[0] == "inout"]
            for j in outs:
                assert np.array_equal(dev[j], host[j], equal_nan=True), (name, j)


def test_inverse_map():
    assert inverse_map(np.array([3, 0], np.int64), 5).tolist() == [1, -1, -1, 0, -1]
    assert inverse_map(np.zeros(0, np.int64), 2).tolist() == [-1, -1]
