"""The composed evaluator of :mod:`caspar_backend.opaque`, without any front end.

A NumPy :class:`HostFunction` ``F(a0, a1) = (sin(a0) a1, a0^2 + a1)`` is called three
times: on ``(x0, x1)``, on the first call's result and ``x2`` (nested: level 1), and on
``(2, x2)`` (a constant argument, not differentiated).  The same NLP written out as
caspar expressions is the reference: values, gradient, Jacobian and Hessian of the
composition must equal the plain compiled problem's to rounding, at random points and
multipliers; the solve must take the same iterations.
"""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.errors import ModelError
from caspar_backend.expr import Graph
from caspar_backend.model import NLPModel
from caspar_backend.opaque.calls import CallGroup, OpaqueCalls
from caspar_backend.opaque.host import HostFunction
from caspar_backend.problem import Problem


class SinProduct(HostFunction):
    """``F(a) = (sin(a0) a1, a0^2 + a1)`` with exact derivatives (final)."""

    name, kind, n_in, n_out = "F", "NumPy", 2, 2

    def __init__(self):
        self.calls = []

    def prepare(self, active):
        self.active = np.asarray(active, dtype=np.int64)
        full_r = np.array([0, 0, 1, 1])       # dF_r / da_c, all four entries
        full_c = np.array([0, 1, 0, 1])
        keep = np.isin(full_c, self.active)
        local = {int(a): i for i, a in enumerate(self.active)}
        self.jac_rows = full_r[keep]
        self.jac_cols = np.array([local[int(c)] for c in full_c[keep]], dtype=np.int64)
        # lower triangle of the weighted Hessian over (a0, a1)
        pairs = [(r, c) for r, c in ((0, 0), (1, 0)) if r in local and c in local]
        self.hess_rows = np.array([local[r] for r, _ in pairs], dtype=np.int64)
        self.hess_cols = np.array([local[c] for _, c in pairs], dtype=np.int64)
        self._pairs = pairs
        self._jac_keep = keep

    def values(self, A):
        self.calls.append(A.shape[1])
        a0, a1 = A
        return np.vstack([np.sin(a0) * a1, a0 ** 2 + a1])

    def jacobian(self, A):
        a0, a1 = A
        full = np.stack([np.cos(a0) * a1, np.sin(a0), 2 * a0, np.ones_like(a0)], axis=1)
        return full[:, self._jac_keep]

    def hessian(self, A, W):
        a0, a1 = A
        w0, w1 = W
        h = {(0, 0): -np.sin(a0) * a1 * w0 + 2 * w1, (1, 0): np.cos(a0) * w0}
        return np.stack([h[p] for p in self._pairs], axis=1).reshape(A.shape[1], -1)


def _models():
    """(opaque model, the same NLP as expressions)."""
    def F(g, a0, a1):
        return g.mul(g.apply("sin", a0), a1), g.add(g.mul(a0, a0), a1)

    def build(opaque):
        g = Graph()
        x = [g.var(i) for i in range(3)]
        p = g.param(0)
        two = g.const(2.0)
        args = [[x[0], g.add(x[1], p)]]
        if opaque:
            y = [g.var(3 + j) for j in range(6)]
            args += [[y[0], x[2]], [two, x[2]]]
            r1, r2, r3 = (y[0], y[1]), (y[2], y[3]), (y[4], y[5])
        else:
            r1 = F(g, *args[0])
            r2 = F(g, r1[0], x[2])
            r3 = F(g, two, x[2])
        f = g.sum([g.mul(r1[0], r2[0]), g.mul(r2[1], r2[1]), r3[1], g.mul(x[0], x[0])])
        cons = [g.sub(g.add(r1[1], r3[0]), x[2]), g.mul(r2[0], x[1])]
        calls = None
        if opaque:
            flat = [a for call in args for a in call]
            calls = OpaqueCalls(6, flat, [CallGroup(SinProduct(), np.arange(6).reshape(3, 2).T,
                                                    np.arange(6).reshape(3, 2).T)])
        return NLPModel(g, f, cons, lbx=[-2.0] * 3, ubx=[2.0] * 3, lbg=[-1.0, -0.5],
                        ubg=[1.0, 0.5], x0=[0.3, 0.2, 0.1], p=[0.25], opaque=calls)

    return build(True), build(False)


def test_composition_equals_the_expressions():
    opq, ref = _models()
    po, pr = Problem(opq), Problem(ref)
    eo, er = po.evaluator("cpu"), pr.evaluator("cpu")
    assert eo.n_levels == 2
    grp = opq.opaque.groups[0]
    assert grp.active.tolist() == [0, 1]  # a0 is a constant in one call only
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = rng.uniform(-1.5, 1.5, 3)
        lam = rng.standard_normal(2)
        sigma = float(rng.uniform(0.1, 2.0))
        assert eo.obj(x) == pytest.approx(er.obj(x), rel=1e-13, abs=1e-14)
        np.testing.assert_allclose(eo.cons(x), er.cons(x), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(eo.grad(x), er.grad(x), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(eo.jac(x).toarray(), er.jac(x).toarray(), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(eo.hess(x, lam, sigma).toarray(),
                                   er.hess(x, lam, sigma).toarray(), rtol=1e-11, atol=1e-12)
    # one host call per level (two calls on level 0, one on level 1), not per call
    fn = grp.fn
    fn.calls.clear()
    eo.obj(np.array([0.1, 0.2, 0.3]))
    assert sorted(fn.calls) == [1, 2]


def test_solve_takes_the_expressions_iterations():
    opq, ref = _models()
    ro = Problem(opq).solve(print_level=0)
    rr = Problem(ref).solve(print_level=0)
    assert ro.status == rr.status == "Solve_Succeeded"
    assert ro.iterations == rr.iterations
    assert ro.f == pytest.approx(rr.f, rel=1e-10, abs=1e-12)
    np.testing.assert_allclose(ro.x, rr.x, atol=1e-8)


def test_bad_tables_are_named():
    g = Graph()
    x = g.var(0)
    with pytest.raises(ModelError, match="'F' \\(NumPy\\).*argument row"):
        OpaqueCalls(2, [x], [CallGroup(SinProduct(), [[0], [1]], [[0], [1]])])
    with pytest.raises(ModelError, match="auxiliary value 0 is the result of 2 opaque calls"):
        OpaqueCalls(2, [x, x], [CallGroup(SinProduct(), [[0], [1]], [[0], [0]])])


class ThreeInputs(HostFunction):
    """``F(a) = (a0 sin(a1) + a2^2, a0 a1 a2)`` with exact derivatives and no
    directional methods of its own (the HostFunction defaults) (final)."""

    name, kind, n_in, n_out = "T", "NumPy", 3, 2
    #: the weighted Hessian's lower triangle: (row, col) -> (w0 term, w1 term)
    _H = {(1, 0): (lambda a: np.cos(a[1]), lambda a: a[2]),
          (1, 1): (lambda a: -a[0] * np.sin(a[1]), lambda a: 0 * a[0]),
          (2, 0): (lambda a: 0 * a[0], lambda a: a[1]),
          (2, 1): (lambda a: 0 * a[0], lambda a: a[0]),
          (2, 2): (lambda a: 2 + 0 * a[0], lambda a: 0 * a[0])}

    def prepare(self, active):
        self.active = np.asarray(active, dtype=np.int64)
        assert self.active.tolist() == [0, 1, 2]
        self.jac_rows = np.repeat(np.arange(2), 3)
        self.jac_cols = np.tile(np.arange(3), 2)
        self.hess_rows = np.array([r for r, _ in self._H], dtype=np.int64)
        self.hess_cols = np.array([c for _, c in self._H], dtype=np.int64)

    def values(self, A):
        return np.vstack([A[0] * np.sin(A[1]) + A[2] ** 2, A[0] * A[1] * A[2]])

    def jacobian(self, A):
        a0, a1, a2 = A
        return np.stack([np.sin(a1), a0 * np.cos(a1), 2 * a2, a1 * a2, a0 * a2, a0 * a1],
                        axis=1)

    def hessian(self, A, W):
        return np.stack([W[0] * h0(A) + W[1] * h1(A) for h0, h1 in self._H.values()], axis=1)


def _seeded_models():
    """Two calls of T whose three arguments read two quantities each: ``(x0, 2 x0 + p,
    x0 x1)`` and, nested, ``(y0, sin(y0), y0 x2)``; (opaque model, expressions)."""
    def T(g, a0, a1, a2):
        return (g.add(g.mul(a0, g.apply("sin", a1)), g.mul(a2, a2)),
                g.mul(g.mul(a0, a1), a2))

    def build(opaque):
        g = Graph()
        x = [g.var(i) for i in range(3)]
        p = g.param(0)
        a = [x[0], g.add(g.mul(g.const(2.0), x[0]), p), g.mul(x[0], x[1])]
        if opaque:
            y = [g.var(3 + j) for j in range(4)]
            r1, r2 = (y[0], y[1]), (y[2], y[3])
        else:
            r1 = T(g, *a)
        b = [r1[0], g.apply("sin", r1[0]), g.mul(r1[0], x[2])]
        if not opaque:
            r2 = T(g, *b)
        f = g.sum([g.mul(r1[0], r2[0]), g.mul(r2[1], r2[1]), g.mul(x[0], x[0])])
        cons = [g.sub(r1[1], x[2]), g.mul(r2[0], x[1])]
        calls = None
        if opaque:
            calls = OpaqueCalls(4, a + b, [CallGroup(ThreeInputs(),
                                                     np.arange(6).reshape(2, 3).T,
                                                     np.arange(4).reshape(2, 2).T)])
        return NLPModel(g, f, cons, lbx=[-2.0] * 3, ubx=[2.0] * 3, lbg=[-1.0, -0.5],
                        ubg=[1.0, 0.5], x0=[0.3, 0.2, 0.1], p=[0.25], opaque=calls)

    return build(True), build(False)


def test_seeded_composition_equals_the_expressions():
    """Arguments that read fewer quantities than the function has inputs: the
    composition along seeds (opaque/seeds.py; here through HostFunction's defaults)
    gives the expressions' derivatives, and the solve their iterations."""
    opq, ref = _seeded_models()
    eo, er = Problem(opq).evaluator("cpu"), Problem(ref).evaluator("cpu")
    (plan,) = eo._seeds
    assert plan is not None and (plan.K, plan.k) == (2, 3)
    assert eo.n_levels == 2
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = rng.uniform(-1.5, 1.5, 3)
        lam = rng.standard_normal(2)
        sigma = float(rng.uniform(0.1, 2.0))
        assert eo.obj(x) == pytest.approx(er.obj(x), rel=1e-13, abs=1e-14)
        np.testing.assert_allclose(eo.grad(x), er.grad(x), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(eo.jac(x).toarray(), er.jac(x).toarray(), rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(eo.hess(x, lam, sigma).toarray(),
                                   er.hess(x, lam, sigma).toarray(), rtol=1e-11, atol=1e-12)
    ro, rr = Problem(opq).solve(print_level=0), Problem(ref).solve(print_level=0)
    assert ro.status == rr.status == "Solve_Succeeded"
    assert ro.iterations == rr.iterations
    assert ro.f == pytest.approx(rr.f, rel=1e-10, abs=1e-12)
