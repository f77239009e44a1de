"""Pre-grouped template blocks: the same problem given as tables or as flat
expressions evaluates identically, and both agree with CasADi's AD."""

import numpy as np
import pytest

from caspar_backend import Graph, ModelError, NLPModel, Problem
from caspar_backend.blocks import TemplateBlock
from caspar_backend.errors import IndexOutOfRangeError, NonFiniteError

ca = pytest.importorskip("casadi")

N = 200          # chain length
n = N + 2        # variables


def _step_template():
    """c0 * y1^3 + c1 * y2 - c2 + sin(y1 - y2) sin(y1 + y2) - y0 exp(y0 - y1) - p0 * y1."""
    t = Graph()
    y0, y1, y2, c0, c1, c2, p0 = t.var(0), t.var(1), t.var(2), t.data(0), t.data(1), t.data(2), \
        t.param(0)
    root = (c0 * y1 ** 3 + c1 * y2 - c2 + t.sin(y1 - y2) * t.sin(y1 + y2)
            - y0 * t.exp(y0 - y1) - p0 * y1)
    return t, root


def _objective_template():
    t = Graph()
    return t, t.data(0) * (t.var(1) - t.var(0) ** 2) ** 2 + (1 - t.var(0)) ** 2


def _tables(rng):
    vt = np.vstack([np.arange(N), np.arange(1, N + 1), np.arange(2, N + 2)])
    dt = np.vstack([rng.uniform(1, 3, N), rng.uniform(1, 2, N), rng.uniform(0, 5, N)])
    pt = np.zeros((1, N), dtype=np.int64)
    return vt, pt, dt


def _models(seed=0):
    """(blocked, flat) versions of one problem: N chain rows from a block, one flat
    row, and a flat term adding into block row 5; objective from a block + a flat term."""
    rng = np.random.default_rng(seed)
    vt, pt, dt = _tables(rng)
    w = rng.uniform(50, 150, N)
    # blocked
    g = Graph()
    x = [g.var(i) for i in range(n)]
    tg, troot = _step_template()
    og, oroot = _objective_template()
    blocks = [TemplateBlock(tg, troot, vt, pt, dt, rows=np.arange(N), name="step")]
    oblocks = [TemplateBlock(og, oroot, vt[:2], None, w[None, :], name="rosen")]
    flat = [x[0] * x[1] + x[n - 1], 0.5 * x[3] ** 2]
    m = N + 1
    kw = dict(lbx=-2 * np.ones(n), ubx=2 * np.ones(n), lbg=np.zeros(m), ubg=np.zeros(m),
              x0=np.full(n, 0.5), p=[1.3])
    blocked = NLPModel(g, g.exp(x[4]), flat, constraint_rows=[N, 5], constraint_blocks=blocks,
                       objective_blocks=oblocks, **kw)
    # the same, flat
    h = Graph()
    z = [h.var(i) for i in range(n)]
    p = h.param(0)
    rows = []
    for i in range(N):
        a, b, c = z[vt[0, i]], z[vt[1, i]], z[vt[2, i]]
        e = (dt[0, i] * b ** 3 + dt[1, i] * c - dt[2, i] + h.sin(b - c) * h.sin(b + c)
             - a * h.exp(a - b) - p * b)
        rows.append(e + 0.5 * z[3] ** 2 if i == 5 else e)
    rows.append(z[0] * z[1] + z[n - 1])
    obj = h.sum([w[i] * (z[i + 1] - z[i] ** 2) ** 2 + (1 - z[i]) ** 2 for i in range(N)]
                + [h.exp(z[4])])
    flat_model = NLPModel(h, obj, rows, **kw)
    return blocked, flat_model


def test_blocks_evaluate_like_flat_expressions_and_casadi():
    blocked, flat = _models()
    pb, pf = Problem(blocked), Problem(flat)
    assert pb.m == pf.m == N + 1
    assert sum(gr.size for gr in pb.constraint_groups) == N + 2
    eb, ef = pb.evaluator(), pf.evaluator()
    # CasADi reference of the flat problem (independent AD)
    X, P = ca.SX.sym("x", n), ca.SX.sym("p")
    rng = np.random.default_rng(0)
    vt, pt, dt = _tables(rng)
    w = rng.uniform(50, 150, N)
    G = []
    for i in range(N):
        a, b, c = X[vt[0, i]], X[vt[1, i]], X[vt[2, i]]
        e = (dt[0, i] * b ** 3 + dt[1, i] * c - dt[2, i] + ca.sin(b - c) * ca.sin(b + c)
             - a * ca.exp(a - b) - P * b)
        G.append(e + 0.5 * X[3] ** 2 if i == 5 else e)
    G.append(X[0] * X[1] + X[n - 1])
    G = ca.vertcat(*G)
    f = sum(w[i] * (X[i + 1] - X[i] ** 2) ** 2 + (1 - X[i]) ** 2 for i in range(N)) + ca.exp(X[4])
    L = ca.SX.sym("l", N + 1)
    F = ca.Function("F", [X, P, L], [f, ca.gradient(f, X), G, ca.jacobian(G, X),
                                     ca.hessian(0.3 * f + ca.dot(L, G), X)[0]])
    for _ in range(2):
        xv, lv = rng.uniform(-1, 1, n), rng.standard_normal(N + 1)
        fo, go, Go, Jo, Ho = F(xv, 1.3, lv)
        for ev in (eb, ef):
            assert ev.obj(xv) == pytest.approx(float(fo), rel=1e-12)
            np.testing.assert_allclose(ev.grad(xv), np.array(go).ravel(), rtol=1e-11, atol=1e-9)
            np.testing.assert_allclose(ev.cons(xv), np.array(Go).ravel(), rtol=1e-12, atol=1e-12)
            assert abs(ev.jac(xv) - Jo.sparse()).max() <= 1e-11
            assert abs(ev.hess(xv, lv, 0.3) - Ho.sparse()).max() <= 1e-9
    rb, rf = pb.solve(print_level=0), pf.solve(print_level=0)
    assert rb.status == rf.status and rb.iterations == rf.iterations
    assert rb.f == pytest.approx(rf.f, rel=1e-10)


def test_parameter_derivatives_through_blocks():
    blocked, flat = _models(1)
    pb, pf = Problem(blocked), Problem(flat)
    x = np.random.default_rng(3).uniform(-1, 1, n)
    lam = np.linspace(-1, 1, N + 1)
    db, df = pb.parameter_derivatives(x, lam), pf.parameter_derivatives(x, lam)
    np.testing.assert_allclose(db["lam_p"], df["lam_p"], rtol=1e-12)
    assert abs(db["hess_xp"] - df["hess_xp"]).max() <= 1e-12


def test_repeated_variable_instances_go_the_flat_way():
    """An instance using x[3] in two slots: its Hessian needs the off-diagonal slot
    pair counted twice on the diagonal -- checked against CasADi."""
    t = Graph()
    root = t.var(0) * t.var(1) + t.sin(t.var(0) * t.var(1))
    vt = np.array([[0, 3, 1], [1, 3, 2]])
    g = Graph()
    blk = TemplateBlock(t, root, vt, rows=[0, 1, 2])
    prob = Problem(NLPModel(g, g.const(0.0), [], lbx=-np.ones(4), ubx=np.ones(4),
                            lbg=np.zeros(3), ubg=np.zeros(3), constraint_blocks=[blk]))
    X = ca.SX.sym("x", 4)
    G = ca.vertcat(*[X[a] * X[b] + ca.sin(X[a] * X[b]) for a, b in vt.T])
    L = ca.SX.sym("l", 3)
    F = ca.Function("F", [X, L], [G, ca.jacobian(G, X), ca.hessian(ca.dot(L, G), X)[0]])
    xv, lv = np.array([0.3, -0.7, 0.5, 0.9]), np.array([1.0, -2.0, 0.5])
    Go, Jo, Ho = F(xv, lv)
    ev = prob.evaluator()
    np.testing.assert_allclose(ev.cons(xv), np.array(Go).ravel(), rtol=1e-13)
    assert abs(ev.jac(xv) - Jo.sparse()).max() <= 1e-13
    assert abs(ev.hess(xv, lv, 0.0) - Ho.sparse()).max() <= 1e-12


def test_checked_indices_skip_the_table_passes_only():
    """``checked_indices`` is the builder's promise: no repeated-variable search (an
    instance that breaks the promise is not materialized) and no range pass; the data
    and the rows are still checked."""
    t = Graph()
    root = t.var(0) * t.var(1)
    vt = np.array([[0, 3, 1], [1, 3, 2]])
    assert list(TemplateBlock(t, root, vt).repeated_var_instances()) == [1]
    promised = TemplateBlock(t, root, vt, checked_indices=True)
    assert promised.repeated_var_instances().size == 0
    assert promised.subset(np.array([0, 2])).checked_indices
    g = Graph()
    kw = dict(lbx=-np.ones(4), ubx=np.ones(4), lbg=np.zeros(3), ubg=np.zeros(3))
    with pytest.raises(NonFiniteError, match="blk"):
        NLPModel(g, g.const(0.0), [], constraint_blocks=[TemplateBlock(
            t, t.var(0) * t.data(0), vt, data_table=[[1.0, np.inf, 2.0]], rows=[0, 1, 2],
            name="blk", checked_indices=True)], **kw)
    with pytest.raises(IndexOutOfRangeError, match="row index"):
        NLPModel(g, g.const(0.0), [], constraint_blocks=[TemplateBlock(
            t, root, vt, rows=[0, 1, 3], checked_indices=True)], **kw)


def test_block_input_errors_name_the_block():
    t, root = _step_template()
    g = Graph()
    vt, pt, dt = _tables(np.random.default_rng(0))
    kw = dict(lbx=-np.ones(n), ubx=np.ones(n), lbg=np.zeros(N), ubg=np.zeros(N), p=[1.0])
    with pytest.raises(IndexOutOfRangeError, match="step.*variable index"):
        bad = vt.copy()
        bad[1, 7] = n + 5
        NLPModel(g, g.const(0.0), [], constraint_blocks=[
            TemplateBlock(t, root, bad, pt, dt, np.arange(N), name="step")], **kw)
    for slot, value in ((0, -1), (2, -2**62)):          # negative: read as unsigned, too large
        with pytest.raises(IndexOutOfRangeError, match=f"step, instance 4: variable index "
                                                       f"{value} out of range .* slot {slot}"):
            bad = vt.copy()
            bad[slot, 4] = value
            NLPModel(g, g.const(0.0), [], constraint_blocks=[
                TemplateBlock(t, root, bad, pt, dt, np.arange(N), name="step")], **kw)
    with pytest.raises(IndexOutOfRangeError, match="step.*parameter index 1 "):
        bad = pt.copy()
        bad[0, 2] = 1
        NLPModel(g, g.const(0.0), [], constraint_blocks=[
            TemplateBlock(t, root, vt, bad, dt, np.arange(N), name="step")], **kw)
    with pytest.raises(NonFiniteError, match="step"):
        d = dt.copy()
        d[0, 3] = np.nan
        NLPModel(g, g.const(0.0), [], constraint_blocks=[
            TemplateBlock(t, root, vt, pt, d, np.arange(N), name="step")], **kw)
    with pytest.raises(IndexOutOfRangeError, match="data table has 2 slots"):
        TemplateBlock(t, root, vt, pt, dt[:2], np.arange(N), name="step")
    with pytest.raises(ModelError, match="no expression"):
        NLPModel(g, g.const(0.0), [], constraint_blocks=[
            TemplateBlock(t, root, vt[:, :-1], pt[:, :-1], dt[:, :-1], np.arange(N - 1))], **kw)
    with pytest.raises(ModelError, match="instances"):
        TemplateBlock(t, root, vt, pt[:, :-1], dt, np.arange(N))


def test_describe_materializes_block_rows():
    blocked, _ = _models()
    text = blocked.describe(5)
    assert text.startswith("g[5]: ") and "sin" in text and "x[3]" in text


@pytest.mark.parametrize("by_row", [False, True])
def test_block_group_placement(by_row):
    """A block's group goes after the expression rows' groups (the default) or among
    them by its first row (placed_by_row, the Pyomo template reader's blocks)."""
    g = Graph()
    x = [g.var(i) for i in range(6)]
    # expression rows 0 and 3 (two shapes); the block covers rows 1, 2
    cons = [x[0] * x[1], g.exp(x[2]) - x[3]]
    t = Graph()
    root = t.sin(t.var(0)) + t.var(1) ** 2
    blk = TemplateBlock(t, root, np.array([[2, 4], [3, 5]]), rows=[1, 2], name="b",
                        placed_by_row=by_row)
    model = NLPModel(g, g.sum(x), cons, -np.ones(6), np.ones(6), np.zeros(4), np.zeros(4),
                     constraint_rows=[0, 3], constraint_blocks=[blk])
    first_rows = [int(grp.rows.min()) for grp in Problem(model).constraint_groups]
    assert first_rows == ([0, 1, 3] if by_row else [0, 3, 1])
    # the subset of a block keeps its placement
    assert blk.subset(np.array([1])).placed_by_row is by_row
