"""The fused vector kernels (caspar_backend/arrays/fused.py).

CPU: the op table is complete and consistent (every op a kernel spec of a known kind,
its parameter count the reference's), and the host results are the expressions the
solver used before the kernels, bit for bit.  GPU (``@pytest.mark.gpu``): every kernel
equals its NumPy reference on random data, empty inputs included.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from caspar_backend.arrays import fused, fused_cuda
from caspar_backend.arrays.fused_cuda import Elementwise, Reduction

RNG = np.random.default_rng(7)


def test_op_table_complete():
    """Every op a spec of a known kind whose parameters are the reference's (an
    in-place op's output its last), named in the module's table, and compiled from one
    source with distinct kernel names."""
    assert set(fused.IN_PLACE) <= set(fused.OPS)
    for name, op in fused.OPS.items():
        assert isinstance(op.kernel, (Elementwise, Reduction)), name
        params = [p.split() for p in op.kernel.params.split(",")]
        kinds = [k for k, _ in params]
        assert set(kinds) <= {"vec", "raw", "idx", "scalar", "inout"}, name
        n_ref = len(inspect.signature(op.reference).parameters)
        assert n_ref == len(params), name
        assert (kinds[-1] == "inout") == (name in fused.IN_PLACE), name
        if isinstance(op.kernel, Elementwise):
            assert op.kernel.size in [n for _, n in params], name
            assert bool(op.kernel.out) != (name in fused.IN_PLACE), name
        else:
            assert op.kernel.reduce in ("max", "min", "sum") and "inout" not in kinds, name
        assert name in fused.__doc__, f"{name} missing from the module's table"
    src = fused_cuda.module_source(fused.SPECS)
    for name in fused.SPECS:
        assert src.count(f"void caspar_{name}(") == 1, name


def _case(n=257, k=100):
    w = RNG.normal(size=n)
    idx = np.sort(RNG.choice(n, size=k, replace=False)).astype(np.int64)
    s = RNG.uniform(0.1, 2.0, size=k)
    z = RNG.uniform(0.1, 2.0, size=k)
    ds = RNG.normal(size=k)
    return w, idx, s, z, ds


def test_host_results_are_the_former_expressions():
    w, idx, s, z, ds = _case()
    b = RNG.normal(size=len(idx))
    mu, tau, ks = 0.3, 0.99, 1e10
    xp = np
    assert np.array_equal(fused.call(xp, "gather_slack", w, idx, b, 1.0), w[idx] - b)
    assert np.array_equal(fused.call(xp, "gather_slack", w, idx, b, -1.0), b - w[idx])
    assert fused.call(xp, "ftb_min", s, ds, tau, 1.0) == np.min(
        np.where(ds < 0, -tau * s / ds, np.inf))
    assert fused.call(xp, "ftb_min", s, ds, tau, -1.0) == np.min(
        np.where(-ds < 0, -tau * s / -ds, np.inf))
    assert np.array_equal(fused.call(xp, "bound_mult_step", mu, z, s, w, idx, -1.0),
                          (mu - z * s + z * w[idx]) / s)
    out = w.copy()
    fused.call(xp, "add_barrier", idx, mu, s, -0.5, z, out)
    ref = w.copy()
    ref[idx] += mu / s - 0.5 * z
    assert np.array_equal(out, ref)
    zz = z.copy()
    fused.call(xp, "clip_ratio", s, mu, ks, zz)
    assert np.array_equal(zz, np.clip(z, mu / (ks * s), ks * mu / s))
    assert fused.call(xp, "max_abs_shift", s, z, mu) == np.max(np.abs(s * z - mu))
    assert fused.call(xp, "amax_abs", np.zeros(0)) == 0.0
    assert fused.call(xp, "all_finite", np.array([1.0, np.inf])) == False  # noqa: E712


def _args(name, n, cp):
    """Arguments of op ``name`` on ``n`` entries, as NumPy arrays (floats as scalars)."""
    k = n
    w = RNG.normal(size=max(2 * n, 1))
    idx = np.sort(RNG.choice(len(w), size=k, replace=False)).astype(np.int64)
    s, z, v = (RNG.uniform(0.1, 2.0, size=k) for _ in range(3))
    ds = RNG.normal(size=k)
    table = {
        "amax_abs": (ds,),
        "all_finite": (np.where(np.arange(k) == k // 2, np.nan, ds) if k else ds,),
        "ftb_min": (s, ds, 0.99, -1.0),
        "sum_log": (s,),
        "max_prod": (s, z),
        "max_abs_shift": (s, z, 0.7),
        "gather_slack": (w, idx, v, -1.0),
        "bound_mult_step": (0.7, z, s, w, idx, 1.0),
        "add_ratio": (idx, z, s, w.copy()),
        "add_scaled": (idx, -1.0, z, w.copy()),
        "add_barrier": (idx, -0.7, s, 1e-5, (v > 1).astype(float), w.copy()),
        "residual_static": (ds, s, z, v),
        "clip_ratio": (s, 0.7, 10.0, z.copy()),
    }
    return table[name]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(fused.OPS))
@pytest.mark.parametrize("n", [0, 1, 1000, 100_003])
def test_kernel_equals_reference_on_gpu(name, n):
    cp = pytest.importorskip("cupy")
    host = _args(name, n, cp)
    dev = tuple(cp.asarray(a) if isinstance(a, np.ndarray) else a for a in host)
    got = fused.call(cp, name, *dev)
    want = fused.OPS[name].reference(*host)
    if name in fused.IN_PLACE:
        got, want = dev[-1].get(), host[-1]
    else:
        got = cp.asnumpy(got)
    if want.dtype == bool:
        assert bool(got) == bool(want)
    else:
        # a fused multiply-add rounds once where NumPy rounds twice: after cancellation
        # the difference is an ulp of the terms, not of the result
        scale = float(np.max(np.abs(want))) if np.size(want) else 0.0
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15 * (1.0 + scale))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [7, 100_003])
def test_device_reductions_propagate_nan_and_repeat_bits(n):
    """max and min reductions return NaN when an entry is NaN (NumPy's rule); a sum
    gives the same bits on every call (fixed partition, no atomics)."""
    cp = pytest.importorskip("cupy")
    a = RNG.uniform(0.1, 2.0, size=n)
    a[n // 3] = np.nan
    d = cp.asarray(a)
    assert np.isnan(float(fused.call(cp, "amax_abs", d)))
    # a NaN slack with a negative step: its ratio is NaN (a NaN step is no ratio at
    # all -- not negative -- in the reference as in the kernel)
    assert np.isnan(fused.OPS["ftb_min"].reference(a, -np.ones(n), 0.99, 1.0))
    assert np.isnan(float(fused.call(cp, "ftb_min", d, -cp.ones(n), 0.99, 1.0)))
    assert float(fused.call(cp, "ftb_min", d, -d, 0.99, 1.0)) == pytest.approx(0.99)
    assert not bool(fused.call(cp, "all_finite", d))
    s = cp.asarray(RNG.uniform(0.1, 2.0, size=n))
    first = float(fused.call(cp, "sum_log", s))
    assert all(float(fused.call(cp, "sum_log", s)) == first for _ in range(5))


@pytest.mark.gpu
def test_strided_input_and_packed_scalars():
    cp = pytest.importorskip("cupy")
    from caspar_backend.arrays import scalars

    a = RNG.normal(size=1001)
    got = fused.call(cp, "amax_abs", cp.asarray(a)[::3])
    assert float(got) == np.max(np.abs(a[::3]))
    vals = [cp.asarray(2.5), cp.asarray(True), cp.asarray(np.int64(-7)), cp.asarray(False),
            1.25, cp.asarray(np.float32(0.5))]
    assert scalars(cp, *vals) == [2.5, 1.0, -7.0, 0.0, 1.25, 0.5]
    many = [cp.asarray(float(k)) for k in range(fused_cuda.PACK_MAX + 3)]
    assert scalars(cp, *many) == [float(k) for k in range(fused_cuda.PACK_MAX + 3)]
