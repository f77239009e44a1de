"""Batched LDL^T, CuPy backend (:mod:`caspar_backend.batch.ldl_device`).

* On the CPU: ``kernels/batch_ldl.cu`` compiled as C++ for the host (g++, no FMA
  contraction) and launched thread by thread (a block kernel's threads at once) through
  :class:`DeviceLDL`'s own launch code, in both launch shapes, with NumPy arrays standing in for device memory: factors, inertia, solves and
  products equal the NumPy backend's bit for bit, ``active`` subsets and bad pivots
  included, in minimum-degree and in qdldl's order; in qdldl's order the factors equal
  ``qdldl.Solver.factors()`` too.  And the source compiles for sm_90 with nvcc where
  nvcc is installed.
* GPU (``@pytest.mark.gpu``): ``BatchLDL(xp=cupy)`` in qdldl's order against
  ``BatchLDL(xp=numpy, dense=False)`` on the same cases, bit for bit, and against qdldl itself
  (factors and solves of the clean instances).
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from caspar_backend.batch.ldl import BatchLDL
from caspar_backend.batch.ldl_device import DeviceLDL
from caspar_backend.batch.ldl_host import HostLDL
from caspar_backend.batch.ldl_symbolic import plan_ldl

from .ldl_support import ROOT, arm_case, csc, host_kernels, kkt_case, mpc_case, qdldl_perm

qdldl = pytest.importorskip("qdldl")

CASES = {
    "quasi_definite": lambda: kkt_case(20, B=5),
    "indefinite_slacks": lambda: kkt_case(21, n_slack=5, delta_c=0.0, convex=False, B=5),
    "mpc": lambda: mpc_case(22, T=5, B=3),
}


def _case(name):
    if name == "arm":
        pytest.importorskip("casadi")
        return arm_case(23, B=5)
    return CASES[name]()


def _with_bad_instances(v):
    """v with instance 1 all zeros (first pivot 0) and instance 2 holding a NaN."""
    bad = v.copy()
    bad[1] = 0.0
    bad[2, 0] = np.nan
    return bad


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    k = host_kernels(tmp_path_factory.mktemp("batch_ldl"))
    if k is None:
        pytest.skip("needs g++")
    return k


def _assert_qdldl_factors(s, v, factors, solve, clean):
    """``factors(b)`` -> (L's values in CSC order, d in elimination order) and the
    batch's solutions ``solve(rhs)`` equal qdldl's for the instances ``clean``."""
    rhs = np.random.default_rng(5).standard_normal((len(v), s.n))
    x = solve(rhs)
    for b in clean:
        q = qdldl.Solver(csc(s, v[b]), upper=True)
        L, d, _ = q.factors()
        lx, db = factors(b)
        assert np.array_equal(lx, L.data) and np.array_equal(db, d)
        assert np.array_equal(x[b], q.solve(rhs[b]))


@pytest.mark.parametrize("per_block", [False, True], ids=["thread", "block"])
@pytest.mark.parametrize("order", ["md", "qdldl"])
@pytest.mark.parametrize("name", [*CASES, "arm"])
def test_kernels_compiled_for_the_host_equal_the_numpy_backend(name, order, per_block,
                                                               kernels):
    """Both launch shapes (a thread per instance; a block per instance, level by
    level)."""
    s, v = _case(name)
    B, n = v.shape[0], s.n
    pl = plan_ldl(s, qdldl_perm(s, v) if order == "qdldl" else None)
    host = HostLDL(pl, B)
    dev = DeviceLDL(pl, B, np, kernels=kernels, per_block=per_block)
    rng = np.random.default_rng(1)
    for values, active in ((v, None), (_with_bad_instances(v), None),
                           (v[::-1].copy(), np.array([2, 0]))):
        host.factorize(values, active)
        dev.factorize(values, active)
        F = dev.F.reshape(pl.n_f, B)
        assert np.array_equal(F, host.F, equal_nan=True)
        for a, b in ((dev.n_pos, host.n_pos), (dev.n_neg, host.n_neg),
                     (dev.n_zero, host.n_zero)):
            assert np.array_equal(a, b)
        rhs = rng.standard_normal((B, n))
        assert np.array_equal(dev.solve(rhs), host.solve(rhs), equal_nan=True)
    x = rng.standard_normal((B, n))
    assert np.array_equal(dev.matvec(v, x), host.matvec(v, x))
    # out=: the same numbers in the caller's array, also when it is x itself
    out = x.copy()
    assert dev.matvec(v, out, out=out) is out
    assert np.array_equal(out, host.matvec(v, x))
    if order == "qdldl":
        dev.factorize(v)
        _assert_qdldl_factors(s, v, dev.factor_values, dev.solve, range(B))


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_kernel_source_compiles_for_sm90(tmp_path):
    r = subprocess.run(["nvcc", "-arch=sm_90", "-cubin", "-o", str(tmp_path / "k.cubin"),
                        str(ROOT / "kernels" / "batch_ldl.cu")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ====================================================================== GPU
@pytest.mark.gpu
@pytest.mark.parametrize("max_b", [0, 1 << 16], ids=["thread", "block"])
@pytest.mark.parametrize("name", [*CASES, "arm"])
def test_cupy_backend_equals_numpy_backend_bit_for_bit(name, max_b, monkeypatch):
    import cupy as cp

    from caspar_backend.batch import ldl_device

    monkeypatch.setattr(ldl_device, "BLOCK_VARIANT_MAX_B", max_b)

    s, v = _case(name)
    B, n = v.shape[0], s.n
    perm = qdldl_perm(s, v)
    cpu, gpu = BatchLDL(s, B, perm=perm, dense=False), BatchLDL(s, B, xp=cp, perm=perm)
    rng = np.random.default_rng(2)
    for values, active in ((v, None), (_with_bad_instances(v), None),
                           (v[::-1].copy(), np.array([2, 0]))):
        want = cpu.factorize(values, active)
        got = gpu.factorize(cp.asarray(values),
                            None if active is None else cp.asarray(active))
        for g, w in zip(got, want):
            assert isinstance(g, cp.ndarray) and g.dtype == cp.int64
            assert np.array_equal(g.get(), w)
        assert np.array_equal(gpu._engine.F.get().reshape(-1, B), cpu._engine.F,
                              equal_nan=True)
        rhs = rng.standard_normal((B, n))
        x = gpu.solve(cp.asarray(rhs))
        assert np.array_equal(x.get(), cpu.solve(rhs), equal_nan=True)
    x = rng.standard_normal((B, n))
    y = gpu.matvec(cp.asarray(v), cp.asarray(x))
    assert np.array_equal(y.get(), cpu.matvec(v, x))
    out = cp.asarray(x)
    assert gpu.matvec(cp.asarray(v), out, out=out) is out
    assert np.array_equal(out.get(), cpu.matvec(v, x))
    gpu.factorize(cp.asarray(v))
    _assert_qdldl_factors(s, v, lambda b: _values(gpu, b),
                          lambda r: gpu.solve(cp.asarray(r)).get(), range(B))


def _values(f: BatchLDL, b: int):
    """(L's values in CSC order, d) of instance b from :meth:`BatchLDL.factors`."""
    L, d, _ = f.factors(b)
    return L.data, d


@pytest.mark.gpu
@pytest.mark.parametrize("max_b", [0, 1 << 16], ids=["thread", "block"])
def test_cupy_backend_at_scale(max_b, monkeypatch):
    # B = 20000 instances of the arm-sized KKT and 64 of a 500-row MPC KKT: inertia
    # and solves equal the NumPy backend's (several thread blocks, long op loops)
    import cupy as cp

    from caspar_backend.batch import ldl_device

    monkeypatch.setattr(ldl_device, "BLOCK_VARIANT_MAX_B", max_b)

    for s, v in (kkt_case(24, nx=4, m=2, n_slack=1, B=20000), mpc_case(25, T=50, B=64)):
        B = v.shape[0]
        cpu, gpu = BatchLDL(s, B, dense=False), BatchLDL(s, B, xp=cp)
        for g, w in zip(gpu.factorize(cp.asarray(v)), cpu.factorize(v)):
            assert np.array_equal(g.get(), w)
        rhs = np.random.default_rng(3).standard_normal((B, s.n))
        assert np.array_equal(gpu.solve(cp.asarray(rhs)).get(), cpu.solve(rhs))


def test_block_kernels_thread_count_matches_the_source():
    """The ``*_blk`` kernels' shared reduction arrays are sized by CASPAR_LDL_BLOCK: the
    launch must use that many threads, a power of two (the tree reductions)."""
    import re

    from caspar_backend.batch import ldl_device

    src = (ROOT / "kernels" / "batch_ldl.cu").read_text()
    size = int(re.search(r"#define CASPAR_LDL_BLOCK (\d+)", src).group(1))
    assert ldl_device.BLOCK_THREADS == size and size & (size - 1) == 0
