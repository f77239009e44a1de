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

from caspar_backend.arrays import fused

RNG = np.random.default_rng(7)


def _params(spec: str):
    return [p.strip() for p in spec.split(",") if p.strip()]


def test_op_table_complete():
    assert set(fused.IN_PLACE) <= set(fused.OPS)
    for name, op in fused.OPS.items():
        kind, *spec = op.kernel
        assert kind in ("elementwise", "reduction"), name
        ins, outs = _params(spec[0]), _params(spec[1])
        n_ref = len(inspect.signature(op.reference).parameters)
        if name in fused.IN_PLACE:     # the output array is the reference's last argument
            assert n_ref == len(ins) + len(outs), name
        else:
            assert n_ref == len(ins), name
        assert name in fused.__doc__, f"{name} missing from the module's table"


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
