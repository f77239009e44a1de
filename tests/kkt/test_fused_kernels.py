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
from caspar_backend.arrays.fused_cuda import MAX_COLUMNS, Elementwise, Reduction, Reductions

RNG = np.random.default_rng(7)


def test_op_table_complete():
    """Every op a spec of a known kind whose parameters are the reference's (an
    in-place op's output its last), named in the module's table, and compiled from one
    source with distinct kernel names."""
    assert set(fused.IN_PLACE) <= set(fused.OPS)
    for name, op in fused.OPS.items():
        assert isinstance(op.kernel, (Elementwise, Reduction, Reductions)), name
        params = [p.split() for p in op.kernel.params.split(",")]
        kinds = [k for k, _ in params]
        assert set(kinds) <= {"vec", "raw", "idx", "scalar", "inout"}, name
        n_ref = len(inspect.signature(op.reference).parameters)
        assert n_ref == len(params), name
        assert (kinds[-1] == "inout") == (name in fused.IN_PLACE), name
        if isinstance(op.kernel, Elementwise):
            assert set(op.kernel.sizes()) <= {n for _, n in params}, name
            assert bool(op.kernel.out) != (name in fused.IN_PLACE), name
        elif isinstance(op.kernel, Reduction):
            assert op.kernel.reduce in ("max", "min", "sum") and "inout" not in kinds, name
        else:
            assert 0 < len(op.kernel.columns) <= MAX_COLUMNS and "inout" not in kinds, name
            assert all(r in ("max", "min", "sum") for _, r, _ in op.kernel.columns), name
        assert name in fused.__doc__, f"{name} missing from the module's table"
    src = fused_cuda.module_source(fused.SPECS)
    for name in fused.SPECS:
        assert src.count(f"void caspar_{name}(") == 1, name


@pytest.mark.parametrize("clip", [0.0, 1.0])
def test_step_duals_is_the_former_axpys_and_clips(clip):
    """The accepted step's multiplier update in one op: bit for bit the three axpys and,
    with ``clip``, the two clips it replaced (lengths differ: y, zL, zU)."""
    y, zL, zU = RNG.normal(size=7), RNG.uniform(0.1, 2, 5), RNG.uniform(0.1, 2, 3)
    dy, dzL, dzU = RNG.normal(size=7), RNG.normal(size=5), RNG.normal(size=3)
    sL, sU = RNG.uniform(0.1, 2, 5), RNG.uniform(0.1, 2, 3)
    want = [a.copy() for a in (y, zL, zU)]
    for a, d, v in ((0.3, dy, want[0]), (0.7, dzL, want[1]), (0.7, dzU, want[2])):
        fused.call(np, "axpy", a, d, v)
    if clip:
        fused.call(np, "clip_ratio", sL, 0.2, 10.0, want[1])
        fused.call(np, "clip_ratio", sU, 0.2, 10.0, want[2])
    before = [a.copy() for a in (y, zL, zU)]
    # a closed gate (the new point's derivatives not finite) moves nothing
    fused.call(np, "step_duals", 0.3, dy, 0.7, dzL, sL, dzU, sU, 0.2, 10.0, clip,
               np.zeros(1), y, zL, zU)
    assert all(np.array_equal(a, b) for a, b in zip((y, zL, zU), before))
    fused.call(np, "step_duals", 0.3, dy, 0.7, dzL, sL, dzU, sU, 0.2, 10.0, clip,
               np.ones(1), y, zL, zU)
    assert all(np.array_equal(a, b) for a, b in zip((y, zL, zU), want))


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
    s2 = fused.call(xp, "gather_slacks", w, np.concatenate([idx, idx]), np.concatenate([b, b]),
                    float(len(idx)))
    assert np.array_equal(s2, np.concatenate([w[idx] - b, b - w[idx]]))
    e, ie = s[:0], idx[:0]
    got = fused.call(xp, "step_bounds", e, ie, e, ie, w, s, ds, s, -ds, tau)
    assert [float(v) for v in got] == [np.inf, np.inf,
                                       np.min(np.where(ds < 0, -tau * s / ds, np.inf)),
                                       np.min(np.where(-ds < 0, -tau * s / -ds, np.inf))]
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


def test_host_results_of_the_combined_ops_are_the_former_expressions():
    """The ops that replaced sequences of solver operations: on the host, the same
    operations in the same order (bit for bit)."""
    w, idx, s, z, ds = _case()
    sU, zU = s[::-1].copy(), z[::-1].copy()
    idamp = idx[:5] % len(s)
    mu, tau = 0.3, 0.99
    got = fused.call(np, "barrier_sums", s, idamp, sU[:7], idamp[:0])
    want = (min(np.min(s), np.min(sU[:7])), np.sum(np.log(s)), np.sum(np.log(sU[:7])),
            np.sum(s[idamp]), 0.0)
    assert [float(v) for v in got] == [float(v) for v in want]
    assert float(fused.call(np, "barrier_sums", s[:0], idx[:0], s[:0], idx[:0])[0]) == np.inf
    dw = RNG.normal(size=len(w))
    got = fused.call(np, "step_reference", dw, dw, w, ds)
    assert [float(v) for v in got] == [dw @ dw, np.max(np.abs(dw)),
                                       np.max(np.abs(dw / (1.0 + np.abs(w)))),
                                       np.sum(np.abs(ds))]
    got = fused.call(np, "step_bounds", s, idx, sU, idx, w, z, ds, zU, -ds, tau)
    ftb = [np.min(np.where(w[idx] < 0, -tau * s / w[idx], np.inf)),
           np.min(np.where(-w[idx] < 0, -tau * sU / -w[idx], np.inf)),
           np.min(np.where(ds < 0, -tau * z / ds, np.inf)),
           np.min(np.where(-ds < 0, -tau * zU / -ds, np.inf))]
    assert [float(v) for v in got] == [float(v) for v in ftb]
    got = fused.call(np, "optimality_norms", w, ds, -ds, w, s, z, sU, zU, mu)
    want = [np.max(np.abs(w)), np.max(np.abs(ds)), np.max(s * z), np.max(sU * zU),
            np.max(np.abs(s * z - mu)), np.max(np.abs(sU * zU - mu)), np.sum(z), np.sum(zU),
            np.sum(np.abs(ds)), np.max(np.abs(w))]
    assert [float(v) for v in got] == [float(v) for v in want]
    # constr_viol: rows idx carry slacks, the others are equalities
    m = len(w)
    hv, dc = RNG.normal(size=m), RNG.uniform(0.5, 2.0, size=m)
    enforced = np.setdiff1d(np.arange(m), idx)
    lo, hi = -np.abs(ds), np.where(ds > 0, np.inf, np.abs(ds))
    g = hv[idx] + s
    v = np.maximum(np.maximum(lo - g, g - hi), 0.0)
    u = np.abs(hv) / dc
    u[idx] = v / dc[idx]
    got = fused.call(np, "constr_viol", hv, idx, s, lo, hi, enforced, dc, dc[idx])
    assert [float(x) for x in got] == [max(np.max(v), np.max(np.abs(hv[enforced]))),
                                       np.max(u)]
    fin, total = fused.call(np, "finite_abs_sum", ds)
    assert bool(fin) and float(total) == np.sum(np.abs(ds))
    assert not fused.call(np, "all_finite2", ds, np.array([np.nan]))[0]
    out = w.copy()
    fused.call(np, "axpy", 0.7, dw, out)
    assert np.array_equal(out, w + 0.7 * dw)
    fused.call(np, "axpy_into", w, 0.7, dw, out)
    assert np.array_equal(out, w + 0.7 * dw)
    out = np.empty(len(s))
    fused.call(np, "gather_mul", s, w, idx, out)
    assert np.array_equal(out, s * w[idx])
    fused.call(np, "gather_scale", w, idx, 0.3, out)
    assert np.array_equal(out, w[idx] * 0.3)
    assert np.array_equal(fused.call(np, "neg_sum", s, ds), -(s + ds))
    fused.call(np, "scaled_shift", z, s, ds, out)
    assert np.array_equal(out, z * (s - ds))
    fused.call(np, "private_ratio", w, idx, dw, idx, 1e-3, out)
    assert np.array_equal(out, w[idx] ** 2 / np.maximum(dw[idx] + 1e-3, 1e-30))
    b = np.ones(len(s) + 5 + 3)
    fused.call(np, "concat_rhs", s, ds[:5], len(s), 5.0, b)
    assert np.array_equal(b, np.concatenate([s, ds[:5], np.zeros(3)]))
    q = np.empty(2 * len(s) + 5 + len(z))
    fused.call(np, "kkt_squares", s, idx[:5] % len(s), ds, z, len(s), 5.0, len(ds), q)
    assert np.array_equal(q, np.concatenate([s * s, s[idx[:5] % len(s)] ** 2, ds * ds, z * z]))
    ew, dstat, diag = s.copy(), np.empty(len(s)), np.empty(len(s))
    fused.call(np, "col_static_term", z, 1e-4, 1e-8, ew, dstat, diag)
    e = np.minimum(np.sqrt(s), 1.0) * 1e-8
    assert np.array_equal(ew, e) and np.array_equal(dstat, e)
    assert np.array_equal(diag, (z + 1e-4) + e)
    ec = s.copy()
    fused.call(np, "row_static_term", 1e-9 * z, 1e-8, 1e-10, 1.0, ec, dstat, diag)
    e = np.maximum(np.minimum(np.minimum(s, 1.0) * 1e-8, 1e-9 * z) - 1e-10, 0.0)
    assert np.array_equal(ec, e) and np.array_equal(dstat, -e)
    assert np.array_equal(diag, -e - 1e-10)


def _bound_pair(k):
    """Lower and upper bounds of k entries: finite, infinite on either side, wide, tight
    (a push from each side would cross) and equal."""
    lo = RNG.normal(size=k) * 10.0 ** RNG.integers(-3, 4, size=k)
    width = np.choose(RNG.integers(0, 3, size=k), [np.full(k, 1e-9), np.full(k, 0.0),
                                                   RNG.uniform(0.1, 100, size=k)])
    hi = lo + width
    lo[RNG.random(k) < 0.2] = -np.inf
    hi[RNG.random(k) < 0.2] = np.inf
    return lo, hi


def _bound_sides(k):
    """``relax_bounds``' sides for k // 2 variables and k - k // 2 slack rows, their
    per-row factors (bound or equality relaxation) and scaling."""
    nx, ns = k // 2, k - k // 2
    xl, xu = _bound_pair(nx)
    gl, gu = _bound_pair(ns)
    fs = np.where(RNG.random(ns) < 0.3, 1e-10, 1e-8)
    return xl, gl, xu, gu, fs, RNG.uniform(1e-3, 1.0, size=ns)


def _row_plan(m):
    """Jacobian values with NaN and infinite entries, and a CSR plan of m rows (0-4
    entries each) over a permutation of them."""
    counts = RNG.integers(0, 5, size=m)
    nnz = int(counts.sum())
    jv = RNG.normal(size=nnz) * 10.0 ** RNG.integers(-3, 4, size=nnz)
    jv[RNG.random(nnz) < 0.02] = np.nan
    jv[RNG.random(nnz) < 0.02] = -np.inf
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return jv, RNG.permutation(nnz).astype(np.int64), indptr


def test_setup_ops_are_the_solvers_host_formulas():
    """``relax_bounds`` and ``push_bounds`` (arrays/fused_setup.py) give, bit for bit,
    :func:`~caspar_backend.solver.relaxation.relaxed_bounds` and
    :func:`~caspar_backend.solver.initial.pushed`."""
    from types import SimpleNamespace

    from caspar_backend.solver.initial import pushed
    from caspar_backend.solver.relaxation import relaxed_bounds

    for k in (0, 1, 7, 1000):
        xl, gl, xu, gu, fs, dci = _bound_sides(k)
        nx, ns = len(xl), len(gl)
        opts = SimpleNamespace(bound_relax_factor=1e-8, equality_relax_factor=1e-10,
                               constr_viol_tol=1e-4)
        r = np.empty(2 * (nx + ns))
        fused.call(np, "relax_bounds", xl, gl, xu, gu, fs, dci, float(nx), float(ns),
                   1e-8, 1e-4, r)
        np.testing.assert_array_equal(r, relaxed_bounds(xl, gl, xu, gu, fs == 1e-10, dci,
                                                        opts))
        wL, wU = _bound_pair(k)
        v = RNG.normal(size=k) * 100
        want = pushed(v.copy(), wL, wU, 1e-2, 0.5)
        fused.call(np, "push_bounds", wL, wU, 1e-2, 0.5, v)
        np.testing.assert_array_equal(v, want)
        jv, perm, indptr = _row_plan(k)
        rows = np.empty(len(jv), np.int64)
        rows[perm] = np.repeat(np.arange(k), np.diff(indptr))    # jv[perm[p]] is in row p's
        want = np.zeros(k)
        with np.errstate(invalid="ignore"):
            np.maximum.at(want, rows, np.abs(jv))
        got = np.empty(k)
        fused.call(np, "row_abs_max", jv, perm, indptr, got)
        np.testing.assert_array_equal(got, want)


def _inv(idx, n):
    from caspar_backend.solver.structure import inverse_map

    return inverse_map(idx, n)


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
        "sum_log": (s,),
        "max_prod": (s, z),
        "max_abs_shift": (s, z, 0.7),
        "gather_slacks": (w, idx, v, float(k // 3)),
        "gather_scale": (w, idx, 1e-3, s.copy()),
        "neg_sum": (s, ds),
        "bound_mult_step": (0.7, z, s, w, idx, 1.0),
        "add_ratio": (idx, z, s, w.copy()),
        "add_scaled": (idx, -1.0, z, w.copy()),
        "add_barrier": (idx, -0.7, s, 1e-5, (v > 1).astype(float), w.copy()),
        "residual_static": (ds, s, z, v),
        "clip_ratio": (s, 0.7, 10.0, z.copy()),
        "barrier_sums": (s, idx[:k // 2] % max(k, 1), v[:k // 3], idx[:k // 5] % max(k // 3, 1)),
        "step_reference": (ds, v, z, s[:k // 2]),
        "step_bounds": (s, idx, v[:k // 2], idx[:k // 2], RNG.normal(size=len(w)), z, ds,
                        v[:k // 3], ds[:k // 3], 0.99),
        "optimality_norms": (ds, s[:k // 2], -ds, w, s, z, v[:k // 3], z[:k // 3], 0.7),
        "constr_viol": (RNG.normal(size=len(w)), idx, ds, -s, np.where(v > 1, np.inf, v),
                        np.setdiff1d(np.arange(len(w)), idx), RNG.uniform(0.5, 2, len(w)), z),
        "total": (ds,),
        "trial_sums": (np.where(np.arange(k) == k // 3, np.inf, ds) if k else ds, s,
                       idx[:k // 2] % max(k, 1), v[:k // 3], idx[:k // 5] % max(k // 3, 1)),
        "reference_sums": (ds, v, z, s[:k // 2], s, idx[:k // 2] % max(k, 1), v[:k // 3],
                           idx[:k // 5] % max(k // 3, 1), np.arange(k, dtype=np.int64),
                           (2 * np.arange(k // 3, dtype=np.int64)) % max(k, 1), z, ds,
                           v[:k // 3], -ds[:k // 3], 0.99),
        "finite_abs_sum": (np.where(np.arange(k) == k // 3, np.inf, ds) if k else ds,),
        "all_finite2": (ds, np.where(np.arange(k) == k // 2, np.nan, ds)[:k // 2]),
        "amax_abs2": (ds, z[:k // 2]),
        "amax_abs3": (ds, z[:k // 2], -s),
        "axpy": (-0.3, ds, z.copy()),
        "axpy_into": (z, -0.3, ds, s.copy()),
        "lagrangian_residual": (w, RNG.normal(size=len(w)), idx, z, idx[:k // 2], v[:k // 2],
                                _inv(idx, len(w)), _inv(idx[:k // 2], len(w))),
        "barrier_gradient": (w, idx, s, (v > 1).astype(float), idx[:k // 2], z[:k // 2],
                             (v[:k // 2] > 1).astype(float), -0.7, 1e-5, 0.7, -1e-5,
                             _inv(idx, len(w)), _inv(idx[:k // 2], len(w))),
        "bound_sigma": (idx, z, s, idx[:k // 2], v[:k // 2], z[:k // 2], _inv(idx, len(w)),
                        _inv(idx[:k // 2], len(w)), w.copy()),
        "constraint_residual": (np.abs(w) + 0.5, w[::-1].copy(), RNG.normal(size=len(w)),
                                idx, ds, _inv(idx, len(w)), w.copy()),
        "scale_pad": (1e-3, ds, 0.0, np.empty(k + 3)),
        "mul_pad": (s, ds, -1.0, np.empty(k + 3)),
        "step_duals": (-0.3, ds[:k // 2], 0.7, ds, s, v[:k // 3], z[:k // 3], 0.1, 10.0, 1.0,
                       np.ones(1), s[:k // 2].copy(), z.copy(), v[:k // 3].copy()),
        "gather_mul": (ds, w, idx, s.copy()),
        "scaled_shift": (z, ds, v, s.copy()),
        "scale_add": (1e-8, v, s.copy()),
        "private_ratio": (w, idx, np.abs(w), idx, 1e-4, s.copy()),
        "concat_rhs": (ds, z[:k // 2], float(k), float(k // 2), np.ones(2 * k)),
        "kkt_squares": (ds, idx[:k // 2] % max(k, 1), z, v[:k // 3],
                        float(k), float(k // 2), float(k), np.empty(2 * k + k // 2 + k // 3)),
        "col_static_term": (s, 1e-4, 1e-8, z.copy(), v.copy(), ds.copy()),
        "row_static_term": (1e-9 * z, 1e-8, 1e-10, 1.0, s.copy(), v.copy(), ds.copy()),
        "relax_bounds": _bound_sides(k) + (float(k // 2), float(k - k // 2), 1e-8, 1e-4,
                                           np.empty(2 * k)),
        "push_bounds": _bound_pair(k) + (1e-2, 1e-2, 3 * ds),
        "row_abs_max": _row_plan(k) + (np.empty(k),),
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
        # every in-place output (the last argument, and the ``inout`` ones before it)
        pos = [j for j, p in enumerate(fused.OPS[name].kernel.params.split(","))
               if p.split()[0] == "inout"]
        got = np.concatenate([dev[j].get() for j in pos])
        want = np.concatenate([host[j] for j in pos])
    elif isinstance(fused.OPS[name].kernel, Reductions):
        got = np.array([float(g) for g in got])
        want = np.array([float(x) for x in want])
    else:
        got = cp.asnumpy(got)
    if want.dtype == bool:
        assert bool(got) == bool(want)
    else:
        # a fused multiply-add rounds once where NumPy rounds twice: after cancellation
        # the difference is an ulp of the terms, not of the result; a reduction sums in
        # another order than NumPy's pairwise sum, so its error bound is eps times the
        # sum of the terms' magnitudes (the inputs' 1-norm), not of the result
        scale = float(np.max(np.abs(want))) if np.size(want) else 0.0
        atol = 1e-15 * (1.0 + scale)
        if isinstance(fused.OPS[name].kernel, Reductions):
            atol += np.finfo(float).eps * _terms_norm(host)
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=atol)


def _terms_norm(args) -> float:
    """The largest 1-norm over the finite entries of the float arrays among ``args``."""
    norms = [float(np.sum(np.abs(a[np.isfinite(a)]))) for a in args
             if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    return max(norms, default=0.0)


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
    e, ie, neg = a[:0], np.zeros(0, np.int64), -np.ones(n)
    assert np.isnan(fused.OPS["step_bounds"].reference(e, ie, e, ie, e, a, neg, e, e, 0.99)[2])
    de, die = cp.asarray(e), cp.asarray(ie)
    got = fused.call(cp, "step_bounds", de, die, de, die, de, d, -cp.ones(n), d, -d, 0.99)
    assert np.isnan(float(got[2])) and float(got[3]) == pytest.approx(0.99)
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


@pytest.mark.gpu
def test_reduction_columns_pack_by_vector_and_offset():
    """A :class:`Reductions` result is a tuple of columns of one vector (no 0-d views);
    :func:`scalars` gathers columns of several results, in any order and at any of the
    24 positions (the offsets of positions 16-23 travel in the second word, an offset >= 8
    at position 15 sets the first word's sign bit), and reads one result's columns in
    order without a pack; ``float``, ``bool`` and ``view`` read one column."""
    cp = pytest.importorskip("cupy")
    from caspar_backend.arrays import scalars

    a, b = RNG.uniform(0.5, 2.0, size=1001), RNG.uniform(0.5, 2.0, size=77)
    w, h = cp.asarray(a), cp.asarray(b)
    norms = fused.call(cp, "optimality_norms", w, h, w, h, h, h, w, w, 0.1)
    assert all(type(c) is fused_cuda.Column for c in norms)
    # each column read alone (the device's sums, not the host's: another order)
    want = [float(c) for c in norms]
    np.testing.assert_allclose(want, fused.OPS["optimality_norms"].reference(
        a, b, a, b, b, b, a, a, 0.1), rtol=1e-13)
    assert fused_cuda.pack(cp, fused.SPECS, list(norms)) is norms[0].vec
    assert scalars(cp, *norms) == want
    two = fused.call(cp, "amax_abs2", w, h)
    mixed = [two[1], cp.asarray(3.0), 1.5, cp.asarray(True)] + list(norms) \
        + list(norms[::-1]) + [two[0]]
    expect = ([float(np.max(np.abs(b))), 3.0, 1.5, 1.0] + want + want[::-1]
              + [float(np.max(np.abs(a)))])
    assert len(mixed) == fused_cuda.PACK_MAX + 1 and mixed[15].index == 8
    assert scalars(cp, *mixed[:fused_cuda.PACK_MAX]) == expect[:fused_cuda.PACK_MAX]
    assert scalars(cp, *mixed) == expect               # past PACK_MAX: stacked views
    assert float(norms[9]) == want[9] and float(norms[9].view()) == want[9]
    assert bool(fused.call(cp, "all_finite2", w, h)[0])


def test_copy_into_on_the_host_and_its_fallback():
    """``copy_into`` is ``dst[...] = src`` on the host, and wherever the device copy does
    not apply (another length broadcasts or fails as the assignment does)."""
    from caspar_backend.arrays import copy_into

    src, dst = RNG.standard_normal(9), np.zeros(9)
    copy_into(np, dst, src)
    assert np.array_equal(dst, src)
    one = np.zeros(9)
    copy_into(np, one, np.ones(1))
    assert np.array_equal(one, np.ones(9))


@pytest.mark.gpu
@pytest.mark.parametrize("n", [0, 1, 100_003])
def test_copy_into_on_gpu(n):
    """The device-to-device copy: bits equal, views of one buffer, stream order kept
    (a kernel queued after it reads the copied values)."""
    from caspar_backend.arrays import copy_into

    cp = pytest.importorskip("cupy")
    a = RNG.standard_normal(2 * n + 1)
    buf = cp.zeros(2 * n + 1)
    src = cp.asarray(a)
    copy_into(cp, buf[:n], src[n + 1:])
    assert np.array_equal(buf[:n].get(), a[n + 1:])
    assert float(buf[n:].sum()) == 0.0
    # a strided destination takes the assignment
    copy_into(cp, buf[::2], src[::2])
    assert np.array_equal(buf[::2].get(), a[::2])
