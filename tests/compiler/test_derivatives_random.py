"""Randomized differential tests of the compiled derivatives against independent references.

Each batch is one NLPModel whose constraints are random expressions (every op of
:data:`caspar_backend.ops.OPS` is forced as the root op in turn, the rest of each
tree is random) and whose objective is one more random expression.  Expression k
uses its own block of three variables (plus shared parameters), so

* the Jacobian is block structured and one finite-difference sweep per block
  coordinate (3 sweeps, all blocks at once) gives every Jacobian entry;
* the Lagrangian Hessian is block diagonal: block k is exactly ``lam_k * grad^2 g_k``
  (the objective's block ``obj_factor * grad^2 f``), so one Hessian evaluation checks
  every expression's Hessian separately, again in 3 sweeps.

References (all independent of caspar's derivative code):

* values: ``expr.evaluate`` (the op table's pure-Python ``fold`` rules), rel 1e-12;
* gradient, Jacobian, Hessian: central differences with one Richardson step
  (error O(h^4)), rel error ``|a - fd| / max(1, |fd|) <= 1e-6``; the Hessian is
  differenced from the Lagrangian gradient ``obj_factor grad f + J^T lam``, whose
  analytic form is itself checked against finite differences and CasADi first;
* CasADi's own AD of the same expression (translated node by node, see
  ``exprgen.to_casadi``): ``jacobian`` and ``hessian``, rel 1e-9;
* structure: every entry CasADi finds non-zero is in caspar's sparsity pattern.

Points are sampled inside every op's domain and away from kinks: non-smooth ops
keep the same discrete outcome within 2.5x the FD step of the point in every
coordinate (``exprgen.point_ok``), so the finite differences are taken on one
smooth piece.
"""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend import ops
from caspar_backend.expr import Graph, evaluate, topo_order, to_str
from caspar_backend.model import NLPModel
from caspar_backend.problem import Problem
from tests.support.exprgen import ALL_OPS, ExprGen, rel_err, richardson, sample_point, to_casadi

ca = pytest.importorskip("casadi")

B = 3            # variables per expression block
NP = 4           # shared parameters
H = 1e-3         # finite-difference step (coordinates are O(1))
FD_TOL = 1e-6
AD_TOL = 1e-9
VAL_TOL = 1e-12

# (seed, number of constraint expressions, depth); 4 x 260 = 1040 random expressions
BATCHES = [(11, 260, 3), (12, 260, 4), (13, 260, 3), (14, 260, 5)]


class Batch:
    """A random model, its test point and CasADi references."""

    def __init__(self, seed, n_expr, depth):
        rng = np.random.default_rng(seed)
        g = Graph()
        self.p = rng.uniform(0.5, 1.5, size=NP)
        n = B * (n_expr + 1)
        x = np.zeros(n)
        exprs = []
        for k in range(n_expr + 1):         # block 0: objective; block k+1: constraint k
            cols = list(range(B * k, B * k + B))
            op = ALL_OPS[(k + seed) % len(ALL_OPS)]
            for _ in range(100):
                gen = ExprGen(g, rng, cols, range(NP))
                e = gen.expr_with(depth, op)
                r = rng.random()
                if r < 0.3:     # couple the op's variables with the rest of the block
                    e = g.mul(e, g.add(g.const(1.0), gen.bounded(1)))
                elif r < 0.5:
                    e = g.add(e, gen.any(2))
                xk = sample_point(rng, [e], n, self.p, var_idx=cols, tries=20,
                                  radius=2.5 * H)
                if xk is not None:
                    break
            else:
                raise RuntimeError(f"no valid point for a random {op} expression")
            x[cols] = xk[cols]
            exprs.append(e)
        self.g, self.x, self.n, self.m = g, x, n, n_expr
        self.obj, self.cons = exprs[0], exprs[1:]
        self.model = NLPModel(g, self.obj, self.cons, lbx=np.full(n, -10.0),
                              ubx=np.full(n, 10.0), lbg=np.full(n_expr, -np.inf),
                              ubg=np.full(n_expr, np.inf), x0=x, p=self.p)
        self.problem = Problem(self.model)
        self.ev = self.problem.evaluator()
        self.lam = rng.uniform(-2.0, 2.0, size=n_expr)
        self.sigma = 0.7
        self._casadi()

    def _casadi(self):
        xs, ps = ca.SX.sym("x", self.n), ca.SX.sym("p", NP)
        lam, sig = ca.SX.sym("lam", self.m), ca.SX.sym("sigma")
        out = to_casadi([self.obj] + self.cons, xs, ps)
        f, gv = out[0], ca.vertcat(*out[1:])
        lag = sig * f + ca.dot(lam, gv)
        hess = ca.hessian(lag, xs)[0]
        jac = ca.jacobian(gv, xs)
        self.ca_jac_sp, self.ca_hess_sp = jac.sparsity(), hess.sparsity()
        fun = ca.Function("ref", [xs, ps, lam, sig],
                          [f, gv, ca.gradient(f, xs), jac, hess])
        r = fun(self.x, self.p, self.lam, self.sigma)
        self.ca_f = float(r[0])
        self.ca_g = np.array(r[1]).reshape(-1)
        self.ca_grad = np.array(r[2]).reshape(-1)
        self.ca_jac = np.array(r[3].full())
        self.ca_hess = np.array(r[4].full())

    def block(self, k):
        """Variable indices of expression k (0 = objective, k >= 1 constraint k-1)."""
        return np.arange(B * k, B * k + B)

    def describe(self, k):
        e = self.obj if k == 0 else self.cons[k - 1]
        what = "objective" if k == 0 else f"constraint {k - 1}"
        return f"{what} at x={self.x[self.block(k)]}: {to_str(e, 400)}"


_CACHE: dict = {}


def batch(spec) -> Batch:
    if spec not in _CACHE:
        _CACHE[spec] = Batch(*spec)
    return _CACHE[spec]


@pytest.fixture(params=BATCHES, ids=[f"seed{s}-n{n}-depth{d}" for s, n, d in BATCHES])
def bt(request):
    return batch(request.param)


def _block_of_col(j):
    return j // B


# -------------------------------------------------------------------- coverage
def test_batches_cover_every_op_and_enough_expressions():
    seen, total = set(), 0
    for spec in BATCHES:
        b = batch(spec)
        total += b.m + 1
        seen |= {n.op for n in topo_order([b.obj] + b.cons)}
    assert total >= 1000
    missing = set(ops.OPS) - seen
    assert not missing, f"ops never generated: {missing}"


# ---------------------------------------------------------------------- values
def test_values_match_fold_reference(bt):
    want = np.array(evaluate(bt.cons, bt.x, bt.p))
    got = bt.ev.cons(bt.x)
    bad = np.flatnonzero(rel_err(got, want) > VAL_TOL)
    assert not bad.size, "\n".join(f"{bt.describe(k + 1)}: {got[k]!r} vs {want[k]!r}"
                                   for k in bad[:5])
    f = evaluate([bt.obj], bt.x, bt.p)[0]
    assert bt.ev.obj(bt.x) == pytest.approx(f, rel=VAL_TOL, abs=VAL_TOL)
    # and the CasADi translation agrees with the fold reference (sanity of the translator)
    assert np.all(rel_err(bt.ca_g, want) <= VAL_TOL)


# ---------------------------------------------------------- first derivatives
def _dense_jac(bt):
    return bt.ev.jac(bt.x).toarray()


def test_jacobian_matches_finite_differences(bt):
    J = _dense_jac(bt)
    rows = np.arange(bt.m)
    errs = []
    for c in range(B):
        d = np.zeros(bt.n)
        d[B + c::B] = 1.0                      # coordinate c of every constraint block
        fd = richardson(bt.ev.cons, bt.x, d, H)
        cols = B * (rows + 1) + c
        ours = J[rows, cols]
        e = rel_err(ours, fd)
        for k in np.flatnonzero(e > FD_TOL):
            errs.append(f"dg/dx{c} {bt.describe(k + 1)}: caspar {ours[k]!r}, fd {fd[k]!r}")
    # no entries outside each constraint's own block
    mask = np.ones_like(J, dtype=bool)
    for k in range(bt.m):
        mask[k, bt.block(k + 1)] = False
    assert not np.any(J[mask]), "Jacobian entries outside the variables a constraint uses"
    assert not errs, f"{len(errs)} Jacobian entries off:\n" + "\n".join(errs[:5])


def test_gradient_matches_finite_differences(bt):
    grad = bt.ev.grad(bt.x)
    for c in range(B):
        d = np.zeros(bt.n)
        d[c] = 1.0
        fd = float(richardson(bt.ev.obj, bt.x, d, H))
        assert rel_err(grad[c], fd) <= FD_TOL, (c, grad[c], fd, bt.describe(0))
    assert not np.any(grad[B:])


def test_first_derivatives_match_casadi(bt):
    J = _dense_jac(bt)
    e = rel_err(J, bt.ca_jac)
    bad = np.argwhere(e > AD_TOL)
    assert not bad.size, "\n".join(
        f"J[{i},{j}] caspar {J[i, j]!r} casadi {bt.ca_jac[i, j]!r}: {bt.describe(i + 1)}"
        for i, j in bad[:5])
    grad = bt.ev.grad(bt.x)
    assert np.all(rel_err(grad, bt.ca_grad) <= AD_TOL), (grad[:B], bt.ca_grad[:B])


# --------------------------------------------------------- second derivatives
def _lag_grad(bt):
    def f(x):
        return bt.sigma * bt.ev.grad(x) + bt.ev.jac(x).T @ bt.lam
    return f


def test_hessian_matches_finite_differences(bt):
    Hs = bt.ev.hess(bt.x, bt.lam, bt.sigma).toarray()
    assert np.array_equal(Hs, Hs.T)
    lg = _lag_grad(bt)
    errs = []
    blocks = np.arange(bt.m + 1)
    for c in range(B):
        d = np.zeros(bt.n)
        d[c::B] = 1.0
        fd = richardson(lg, bt.x, d, H)        # fd[j] = d/dx_{block(j), c} of (grad L)_j
        for r in range(B):
            rows = B * blocks + r
            cols = B * blocks + c
            ours = Hs[rows, cols]
            e = rel_err(ours, fd[rows])
            for k in np.flatnonzero(e > FD_TOL):
                errs.append(f"H[{r},{c}] of {bt.describe(k)}: caspar {ours[k]!r}, "
                            f"fd {fd[rows][k]!r}")
    mask = np.ones_like(Hs, dtype=bool)
    for k in blocks:
        mask[np.ix_(bt.block(k), bt.block(k))] = False
    assert not np.any(Hs[mask]), "Hessian entries between different expressions' variables"
    assert not errs, f"{len(errs)} Hessian entries off:\n" + "\n".join(errs[:5])


def test_hessian_matches_casadi(bt):
    Hs = bt.ev.hess(bt.x, bt.lam, bt.sigma).toarray()
    e = rel_err(Hs, bt.ca_hess)
    bad = np.argwhere(e > AD_TOL)
    assert not bad.size, "\n".join(
        f"H[{i},{j}] caspar {Hs[i, j]!r} casadi {bt.ca_hess[i, j]!r}: "
        f"{bt.describe(_block_of_col(i))}" for i, j in bad[:5])


def test_sparsity_contains_every_casadi_nonzero(bt):
    ev = bt.ev
    ours_j = set(zip(ev.jac_rows.tolist(), ev.jac_cols.tolist()))
    assert len(ours_j) == ev.nnz_jac, "duplicate Jacobian (row, col) pairs"
    ri, ci = np.nonzero(bt.ca_jac)
    missing = [(i, j) for i, j in zip(ri.tolist(), ci.tolist()) if (i, j) not in ours_j]
    assert not missing, missing[:5]
    assert np.all(ev.hess_rows >= ev.hess_cols), "Hessian entries must be lower triangle"
    ours_h = set(zip(ev.hess_rows.tolist(), ev.hess_cols.tolist()))
    ri, ci = np.nonzero(np.tril(bt.ca_hess))
    missing = [(i, j) for i, j in zip(ri.tolist(), ci.tolist()) if (i, j) not in ours_h]
    assert not missing, missing[:5]


def test_sparsity_no_denser_than_casadi(bt):
    """caspar's structural pattern is (nearly) as tight as CasADi's SX pattern.

    CasADi's SX also simplifies a few algebraic cancellations caspar does not
    (``x - (y + x) -> -y``), so an entry CasADi proves zero may exist in caspar's
    pattern -- with the value exactly 0.  A dense blow-up would show as many
    such entries; allow at most 2% of the pattern."""
    ev = bt.ev
    sp = bt.ca_jac_sp
    ca_j = set(zip(sp.row(), sp.get_col()))
    extra_j = set(zip(ev.jac_rows.tolist(), ev.jac_cols.tolist())) - ca_j
    sp = bt.ca_hess_sp
    ca_h = {(max(i, j), min(i, j)) for i, j in zip(sp.row(), sp.get_col())}
    extra_h = set(zip(ev.hess_rows.tolist(), ev.hess_cols.tolist())) - ca_h
    J = bt.ev.jac(bt.x).toarray()
    Hs = bt.ev.hess(bt.x, bt.lam, bt.sigma).toarray()
    assert all(J[i, j] == 0.0 for i, j in extra_j)
    assert all(Hs[i, j] == 0.0 for i, j in extra_h)
    assert len(extra_j) <= 0.02 * ev.nnz_jac, [bt.describe(i + 1) for i, _ in sorted(extra_j)[:3]]
    assert len(extra_h) <= 0.02 * ev.nnz_hess, [f"{rc}: {bt.describe(_block_of_col(rc[0]))}"
                                                for rc in sorted(extra_h)[:3]]


def test_new_parameters_without_recompiling(bt):
    """p is a slot, not a constant: new values give CasADi's values at the new p."""
    p2 = bt.p[::-1] * 1.1
    xs, ps = ca.SX.sym("x", bt.n), ca.SX.sym("p", NP)
    out = to_casadi(bt.cons, xs, ps)
    gv = ca.vertcat(*out)
    fun = ca.Function("g2", [xs, ps], [gv, ca.jacobian(gv, xs)])
    g2, j2 = fun(bt.x, p2)
    with np.errstate(all="ignore"):
        ok = np.isfinite(np.array(g2).reshape(-1))     # p2 may leave some domains
    got = bt.ev.cons(bt.x, p=p2)
    J = bt.ev.jac(bt.x, p=p2).toarray()
    try:
        assert np.all(rel_err(got[ok], np.array(g2).reshape(-1)[ok]) <= 1e-9)
        jref = np.array(j2.full())
        assert np.all(rel_err(J[ok], jref[ok]) <= 1e-9)
    finally:
        bt.ev.set_params(bt.p)


# ---------------------------------------------------- structural exactness
def _single(build, n=3, p=None):
    g = Graph()
    xs = [g.var(i) for i in range(n)]
    e = build(g, xs)
    pv = np.zeros(0) if p is None else np.asarray(p, float)
    m = NLPModel(g, g.const(0.0), [e], lbx=np.full(n, -5.0), ubx=np.full(n, 5.0),
                 lbg=[-np.inf], ubg=[np.inf], p=pv)
    return Problem(m).evaluator()


def _pattern(ev):
    return sorted(set(zip(ev.hess_rows.tolist(), ev.hess_cols.tolist())))


_STRUCT = [
    ("linear", lambda g, x: g.lincomb([2.0, -3.0], [x[0], x[1]]) + g.sum([x[2], -x[0], 4.0])
     - x[1] / 2.0, []),
    ("x*y", lambda g, x: x[0] * x[1], [(1, 0)]),
    ("y*x", lambda g, x: x[1] * x[0], [(1, 0)]),
    ("x**2", lambda g, x: x[0] ** 2, [(0, 0)]),
    ("sin(x)+y", lambda g, x: g.sin(x[0]) + x[1], [(0, 0)]),
    ("x*y*z", lambda g, x: x[0] * x[1] * x[2], [(1, 0), (2, 0), (2, 1)]),
    ("exp(x+z)", lambda g, x: g.exp(x[0] + x[2]), [(0, 0), (2, 0), (2, 2)]),
    ("floor(x)*y", lambda g, x: g.floor(x[0]) * x[1], []),
    ("abs(x)*y", lambda g, x: abs(x[0]) * x[1], [(1, 0)]),
    ("fmax(x,y)", lambda g, x: g.fmax(x[0], x[1]), []),
    ("if_else linear branches", lambda g, x: g.if_else(x[0] < x[1], 2.0 * x[0], x[1] - x[2]),
     []),
    ("if_else(x<y, x*y, z)", lambda g, x: g.if_else(x[0] < x[1], x[0] * x[1], x[2]),
     [(1, 0)]),
    ("x/y", lambda g, x: x[0] / x[1], [(1, 0), (1, 1)]),
    ("x/2 + y**3", lambda g, x: x[0] / 2.0 + x[1] ** 3, [(1, 1)]),
    ("pow(x, 2.5)", lambda g, x: x[0] ** 2.5, [(0, 0)]),
    ("x - x + y", lambda g, x: x[0] - x[0] + x[1], []),
    ("sqrt(x*x)", lambda g, x: g.sqrt(x[0] * x[0]), [(0, 0)]),
    ("atan2(y, x)", lambda g, x: g.atan2(x[1], x[0]), [(0, 0), (1, 0), (1, 1)]),
    ("lincomb x*y terms", lambda g, x: g.lincomb([2.0, 3.0], [x[0] * x[1], x[2]]), [(1, 0)]),
]


@pytest.mark.parametrize("name,build,want", _STRUCT, ids=[s[0] for s in _STRUCT])
def test_hessian_structure_exact(name, build, want):
    ev = _single(build)
    assert _pattern(ev) == want
    assert ev.nnz_hess == len(want), "the same entry listed twice for one instance"


def test_parameters_do_not_create_hessian_entries():
    ev = _single(lambda g, x: g.param(0) * x[0] + g.exp(g.param(1)) * x[1], p=[1.0, 2.0])
    assert _pattern(ev) == []
    ev = _single(lambda g, x: g.param(0) * x[0] * x[0], p=[1.5])
    assert _pattern(ev) == [(0, 0)]
    x = np.array([0.3, 0.0, 0.0])
    assert ev.hess(x, [2.0], 0.0).toarray()[0, 0] == pytest.approx(2.0 * 2.0 * 1.5)


def test_jacobian_structure_exact():
    ev = _single(lambda g, x: x[0] * x[0] + g.floor(x[1]) + 0.0 * x[2])
    # floor has a structurally zero derivative: x1 gets no Jacobian entry (CasADi agrees)
    assert sorted(zip(ev.jac_rows.tolist(), ev.jac_cols.tolist())) == [(0, 0)]
    ev = _single(lambda g, x: x[1] - x[1] + 3.0)
    assert ev.nnz_jac == 0


# ------------------------------------------------- conventions at the kinks
_AT_KINKS = [
    ("abs(x) at 0", lambda g, x: abs(x[0]) + x[1], [0.0, 1.0, 0.0]),
    ("fmin tie", lambda g, x: g.fmin(x[0], x[1]) * x[2], [0.4, 0.4, 1.5]),
    ("fmax tie", lambda g, x: g.fmax(x[0] * x[0], x[1]) + x[2], [0.5, 0.25, 1.5]),
    ("sign at 0", lambda g, x: g.sign(x[0]) * x[1], [0.0, 2.0, 0.0]),
    ("floor at integer", lambda g, x: g.floor(x[0]) * x[1] + g.ceil(x[2]), [2.0, 1.5, -1.0]),
    ("if_else at the switch", lambda g, x: g.if_else(x[0] <= x[1], x[0] * x[2], g.sin(x[1])),
     [0.3, 0.3, 2.0]),
]


@pytest.mark.parametrize("name,build,point", _AT_KINKS, ids=[s[0] for s in _AT_KINKS])
def test_nonsmooth_conventions_match_casadi_through_the_evaluator(name, build, point):
    g = Graph()
    xs = [g.var(i) for i in range(3)]
    e = build(g, xs)
    m = NLPModel(g, e, [e], lbx=np.full(3, -5.0), ubx=np.full(3, 5.0), lbg=[-np.inf],
                 ubg=[np.inf])
    ev = Problem(m).evaluator()
    x = np.array(point)
    sx = ca.SX.sym("x", 3)
    ce = to_casadi([e], sx)[0]
    fun = ca.Function("f", [sx], [ce, ca.gradient(ce, sx), ca.hessian(ce, sx)[0]])
    v, gr, hs = (np.array(a.full()) for a in fun(x))
    assert ev.cons(x)[0] == pytest.approx(float(v[0, 0]), rel=1e-14)
    np.testing.assert_allclose(ev.jac(x).toarray()[0], gr.reshape(-1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(ev.grad(x), gr.reshape(-1), rtol=1e-12, atol=0)
    np.testing.assert_allclose(ev.hess(x, [1.0], 0.0).toarray(), hs, rtol=1e-12, atol=0)


def test_if_else_ignores_the_untaken_branch():
    """if_else(x > 0, sqrt(x)*x, -x*x) at x = -1: the untaken branch is NaN there, the
    value and derivatives are those of -x (CasADi's if_else does the same)."""
    g = Graph()
    x = g.var(0)
    e = g.if_else(x > 0.0, g.sqrt(x) * x, -x * x)
    m = NLPModel(g, e, [e], lbx=[-5.0], ubx=[5.0], lbg=[-np.inf], ubg=[np.inf])
    ev = Problem(m).evaluator()
    pt = np.array([-1.0])
    sx = ca.SX.sym("x")
    ce = to_casadi([e], [sx])[0]
    ref = ca.Function("f", [sx], [ce, ca.gradient(ce, sx), ca.hessian(ce, sx)[0]])(-1.0)
    assert [float(r) for r in ref] == [-1.0, 2.0, -2.0]
    assert ev.cons(pt)[0] == -1.0
    assert ev.jac(pt).toarray()[0, 0] == 2.0
    assert ev.grad(pt)[0] == 2.0
    assert ev.hess(pt, [1.0], 0.0).toarray()[0, 0] == -2.0
    assert ev.hess(pt, [0.0], 1.0).toarray()[0, 0] == -2.0


# ------------------------------------------------------- the derivative checker
class _Sabotaged:
    """An evaluator whose Jacobian entry (row, col) and Hessian are off (test double)."""

    def __init__(self, ev, row, col, jac_err=1e-3, hess_err=0.0):
        self._ev, self.row, self.col = ev, row, col
        self.jac_err, self.hess_err = jac_err, hess_err

    def __getattr__(self, name):
        return getattr(self._ev, name)

    def jac(self, x, p=None):
        J = self._ev.jac(x, p=p).tolil()
        J[self.row, self.col] += self.jac_err
        return J.tocsr()

    def hess(self, x, lam, obj_factor=1.0, p=None):
        Hs = self._ev.hess(x, lam, obj_factor, p=p).tolil()
        Hs[self.col, self.col] += self.hess_err
        return Hs.tocsr()


def test_check_derivatives_passes_and_catches_errors():
    from caspar_backend import check_derivatives

    small = batch((21, 30, 3))
    rep = check_derivatives(small.problem, small.x, small.lam, small.sigma)
    assert rep.ok, str(rep)
    # a constraint with a non-zero Jacobian entry, sabotaged by 1e-3
    row, col = int(small.ev.jac_rows[0]), int(small.ev.jac_cols[0])
    bad = _Sabotaged(small.ev, row, col, jac_err=1e-3)
    bad.var_names, bad.con_names, bad.x0 = (small.problem.var_names,
                                            small.problem.con_names, small.x)
    rep = check_derivatives(bad, small.x, small.lam, small.sigma, hessian=False)
    assert not rep.ok
    kinds = {(k, r, c) for k, r, c, *_ in rep.errors}
    assert ("jac", small.problem.con_names[row], small.problem.var_names[col]) in kinds
    assert len(rep.errors) == 1, str(rep)
    bad = _Sabotaged(small.ev, row, col, jac_err=0.0, hess_err=1e-2)
    bad.var_names, bad.con_names, bad.x0 = (small.problem.var_names,
                                            small.problem.con_names, small.x)
    rep = check_derivatives(bad, small.x, small.lam, small.sigma)
    assert [(k, r, c) for k, r, c, *_ in rep.errors] == [
        ("hess", small.problem.var_names[col], small.problem.var_names[col])], str(rep)


# ----------------------------------------------------- edge-shaped models
def _deep(g, x, P):
    e = x[0]
    for i in range(300):
        e = g.sin(e) + x[i % 3] * 0.01
    return e, [e]


_EDGE = [
    ("bare var, const and param constraints",
     lambda g, x, P: (x[1], [x[0], g.const(2.0), P[0], x[0] + P[0]])),
    ("no constraints", lambda g, x, P: (g.sin(x[0]) * x[1], [])),
    ("parameter-only objective", lambda g, x, P: (P[0] * 2.0, [x[0] * x[1]])),
    ("constant objective", lambda g, x, P: (g.const(3.0), [x[0] * x[1]])),
    ("wide sums (helper path)",
     lambda g, x, P: (g.sum([x[i] * x[(i + 1) % 40] for i in range(40)]),
                      [g.sum([g.sin(x[i]) * x[(i + 3) % 40] for i in range(40)])])),
    ("wide lincomb with variable coefficients",
     lambda g, x, P: (g.lincomb([x[i] for i in range(40)], [g.exp(x[(i + 1) % 40]) for i in range(40)]),
                      [g.lincomb([float(i + 2) for i in range(39)],
                                 [x[i] * x[i + 1] for i in range(39)])])),
    ("lincomb objective split into terms",
     lambda g, x, P: (g.lincomb([2.0, x[0], P[0]], [x[1], x[2], x[0] * x[0]]), [x[0]])),
    ("objective sum with nested lincomb and constant",
     lambda g, x, P: (g.sum([x[0] * x[1], g.lincomb([2.0, 3.0], [x[0] * x[0], x[1]]),
                             g.sin(x[2]), g.const(5.0)]), [x[0]])),
    ("objective sum of a repeated term", lambda g, x, P: (g.sum([x[0] * x[1], x[0] * x[1]]), [x[0]])),
    ("deep chain (300 levels)", _deep),
    ("same variable in base and exponent",
     lambda g, x, P: (g.pow(g.exp(x[0]), x[0]), [g.pow(1.5 + x[0] * x[0], x[0] * x[1])])),
    ("negative powi", lambda g, x, P: (g.powi(2 + x[0], -3), [g.powi(x[0] + 3, -1) * x[1],
                                                               g.powi(g.powi(x[1] + 2, -1), 2)])),
    ("fmin/fmax of one node", lambda g, x, P: (g.fmin(x[0], x[0]) * x[1],
                                                [g.fmax(x[0] * x[1], x[0] * x[1])])),
    ("objective node is a constraint node", lambda g, x, P: (x[0] * x[1], [x[0] * x[1]] * 2)),
]


@pytest.mark.parametrize("name,build", _EDGE, ids=[e[0] for e in _EDGE])
def test_edge_models_match_casadi(name, build):
    n, p = 40, np.array([1.5])
    g = Graph()
    x = [g.var(i) for i in range(n)]
    obj, cons = build(g, x, [g.param(0)])
    m = len(cons)
    model = NLPModel(g, obj, cons, np.full(n, -5.0), np.full(n, 5.0), np.full(m, -np.inf),
                     np.full(m, np.inf), p=p)
    ev = Problem(model).evaluator()
    rng = np.random.default_rng(1)
    z, lam = rng.uniform(-1, 1, n), rng.uniform(-1, 1, m)
    xs, ps = ca.SX.sym("x", n), ca.SX.sym("p", 1)
    out = to_casadi([obj] + cons, xs, ps)
    gv = ca.vertcat(*out[1:]) if cons else ca.SX(0, 1)
    lag = 0.7 * out[0] + (ca.dot(ca.DM(lam), gv) if cons else 0)
    fun = ca.Function("f", [xs, ps], [out[0], gv, ca.gradient(out[0], xs),
                                      ca.jacobian(gv, xs), ca.hessian(lag, xs)[0]])
    f, gc, gr, J, Hs = (np.array(v.full()) for v in fun(z, p))
    assert ev.obj(z) == pytest.approx(float(f[0, 0]), rel=1e-13, abs=1e-14)
    np.testing.assert_allclose(ev.cons(z), gc.reshape(-1), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ev.grad(z), gr.reshape(-1), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ev.jac(z).toarray(), J.reshape(m, n), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ev.hess(z, lam, 0.7).toarray(), Hs, rtol=1e-12, atol=1e-14)
