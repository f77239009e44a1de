"""Pattern groups: structural hashing on flat input, instance tables, and exact
assembly (repeated variables inside an instance, Hessian entries shared by
many instances).

The large model (10^5 constraints, three shapes, shuffled so nothing but
structure tells the shapes apart) is checked against hand-derived vectorized
formulas (``exprgen.three_shape_reference``); the formulas themselves, and a
small copy of the model, are checked against CasADi's AD and finite differences.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from caspar_backend.expr import Graph
from caspar_backend.model import NLPModel
from caspar_backend.problem import Problem
from tests.support.exprgen import (rel_err, richardson, three_shape_model, three_shape_reference,
                     to_casadi)

M_BIG, N_BIG = 100_000, 2_000


@pytest.fixture(scope="module")
def big():
    model, info = three_shape_model(M_BIG, N_BIG, seed=1)
    prob = Problem(model)
    return model, info, prob, prob.evaluator()


def _sparse_close(A, B, tol):
    D = (A - B).tocoo()
    scale = np.maximum(abs(B).max(), 1.0)
    return (np.max(np.abs(D.data)) if D.nnz else 0.0) <= tol * scale


# ------------------------------------------------------------------ grouping
def test_big_model_compiles_to_three_constraint_groups(big):
    model, info, prob, ev = big
    cg, og = prob.constraint_groups, prob.objective_groups
    assert len(cg) <= 3 and len(og) <= 1
    assert len(cg) == 3 and len(og) == 1          # and not fewer: the shapes differ
    assert all(gr.kind == "constraints" for gr in cg)
    assert og[0].kind == "objective" and og[0].size == N_BIG
    assert sorted(gr.size for gr in cg) == sorted(np.bincount(info["shape"]).tolist())
    assert len(prob.groups) == 4
    # every constraint belongs to exactly one group, and each group is one shape
    rows = np.concatenate([gr.rows for gr in cg])
    assert np.array_equal(np.sort(rows), np.arange(M_BIG))
    for gr in cg:
        assert len(set(info["shape"][gr.rows].tolist())) == 1
        assert gr.n_local_vars == 2                  # x_a repeated in shape A: one slot
        # the instance table holds each instance's own two variables
        got = np.sort(gr.var_table, axis=0)
        want = np.sort(np.stack([info["a"][gr.rows], info["b"][gr.rows]]), axis=0)
        assert np.array_equal(got, want)


def test_big_model_structure_is_exact(big):
    model, info, prob, ev = big
    assert ev.nnz_jac == 2 * M_BIG                   # two distinct variables per row
    assert len(set(zip(ev.jac_rows.tolist(), ev.jac_cols.tolist()))) == ev.nnz_jac
    # Hessian: A and B have (aa, ab, bb), C has (aa, ab); objective the diagonal
    counts = np.bincount(info["shape"], minlength=3)
    assert ev.nnz_hess == 3 * counts[0] + 3 * counts[1] + 2 * counts[2] + N_BIG
    assert np.all(ev.hess_rows >= ev.hess_cols)


# ------------------------------------------------------------- evaluation
def test_big_model_values_and_derivatives(big):
    model, info, prob, ev = big
    rng = np.random.default_rng(5)
    x = rng.uniform(-1.0, 1.0, size=N_BIG)
    lam = rng.uniform(-1.0, 1.0, size=M_BIG)
    ref = three_shape_reference(info, x, lam, 0.6)
    assert np.all(rel_err(ev.cons(x), ref["g"]) <= 1e-13)
    assert ev.obj(x) == pytest.approx(ref["f"], rel=1e-12)
    assert np.all(rel_err(ev.grad(x), ref["grad"]) <= 1e-13)
    assert _sparse_close(ev.jac(x), ref["J"], 1e-13)
    # many instances write the same Hessian entry: the evaluator's values, summed,
    # must equal the reference (with duplicates summed by scipy independently)
    Hs = ev.hess(x, lam, 0.6)
    assert _sparse_close(Hs, ref["H"], 1e-12)
    hv = ev.hess_values(x, lam, 0.6)
    coo = sp.coo_matrix((hv, (ev.hess_rows, ev.hess_cols)), shape=(N_BIG, N_BIG)).tocsr()
    assert _sparse_close(coo, sp.tril(ref["H"]).tocsr(), 1e-12)
    # there really are shared entries in this model
    pairs = np.stack([ev.hess_rows, ev.hess_cols])
    assert np.unique(pairs, axis=1).shape[1] < ev.nnz_hess


def test_parameters_enter_through_the_table(big):
    model, info, prob, ev = big
    x = np.linspace(-0.9, 0.9, N_BIG)
    p2 = info["p"] + np.arange(len(info["p"]))
    got = ev.cons(x, p=p2)
    ev.set_params(info["p"])
    ref = three_shape_reference(dict(info, p=p2), x, np.zeros(M_BIG), 0.0)
    assert np.all(rel_err(got, ref["g"]) <= 1e-13)


def test_reference_formulas_match_casadi_and_fd():
    """The hand-derived reference and a small compiled copy of the model, checked
    against CasADi AD and finite differences."""
    ca = pytest.importorskip("casadi")
    model, info = three_shape_model(600, 40, seed=3)
    ev = Problem(model).evaluator()
    rng = np.random.default_rng(9)
    x = rng.uniform(-1.0, 1.0, size=40)
    lam = rng.uniform(-1.0, 1.0, size=600)
    ref = three_shape_reference(info, x, lam, 0.6)
    xs, ps = ca.SX.sym("x", 40), ca.SX.sym("p", len(info["p"]))
    out = to_casadi([model.objective] + model.constraints, xs, ps)
    gv = ca.vertcat(*out[1:])
    lag = 0.6 * out[0] + ca.dot(ca.DM(lam), gv)
    fun = ca.Function("r", [xs, ps], [gv, ca.jacobian(gv, xs), ca.hessian(lag, xs)[0]])
    g_ca, J_ca, H_ca = (np.array(v.full()) for v in fun(x, info["p"]))
    for J in (ref["J"].toarray(), ev.jac(x).toarray()):
        assert np.all(rel_err(J, J_ca) <= 1e-12)
    for Hs in (ref["H"].toarray(), ev.hess(x, lam, 0.6).toarray()):
        assert np.all(rel_err(Hs, H_ca) <= 1e-12)
    assert np.all(rel_err(ev.cons(x), g_ca.reshape(-1)) <= 1e-13)
    # finite differences of the Lagrangian gradient, all columns
    def lag_grad(z):
        return 0.6 * ev.grad(z) + ev.jac(z).T @ lam
    Hev = ev.hess(x, lam, 0.6).toarray()
    for j in range(40):
        e = np.zeros(40)
        e[j] = 1.0
        fd = richardson(lag_grad, x, e, 1e-3)
        assert np.all(rel_err(Hev[:, j], fd) <= 1e-7), j


# ----------------------------------------------- small exact-assembly cases
def _problem(g, obj, cons, n, p=()):
    m = NLPModel(g, obj, cons, lbx=np.full(n, -5.0), ubx=np.full(n, 5.0),
                 lbg=np.full(len(cons), -np.inf), ubg=np.full(len(cons), np.inf), p=p)
    return Problem(m)


def test_repeated_variable_inside_an_instance():
    g = Graph()
    x = [g.var(i) for i in range(3)]
    cons = [x[i] * x[i] * g.sin(x[i]) for i in range(3)]     # x_i three times
    prob = _problem(g, g.const(0.0), cons, 3)
    ev = prob.evaluator()
    assert len(prob.constraint_groups) == 1 and prob.constraint_groups[0].size == 3
    assert ev.nnz_jac == 3 and ev.nnz_hess == 3
    z = np.array([0.3, -0.8, 1.4])
    lam = np.array([1.5, -0.5, 2.0])
    J = ev.jac(z).toarray()
    np.testing.assert_allclose(np.diag(J), 2 * z * np.sin(z) + z * z * np.cos(z), rtol=1e-14)
    d2 = 2 * np.sin(z) + 4 * z * np.cos(z) - z * z * np.sin(z)
    np.testing.assert_allclose(ev.hess(z, lam, 0.0).toarray(), np.diag(lam * d2), rtol=1e-13)


def test_hessian_entry_shared_by_instances_is_summed():
    g = Graph()
    x, y = g.var(0), g.var(1)
    e = x * y
    # the same node three times, and two more instances of the same shape
    cons = [e, e, e, 2.5 * x * y, g.const(-3.0) * x * y]
    prob = _problem(g, x * y, cons, 2)
    ev = prob.evaluator()
    assert len(prob.constraint_groups) == 2       # x*y and (c*x)*y
    lam = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    Hs = ev.hess(np.array([0.4, 0.9]), lam, 0.5).toarray()
    want = 0.5 + 1 + 2 + 3 + 2.5 * 4 - 3.0 * 5
    np.testing.assert_allclose(Hs, [[0.0, want], [want, 0.0]], rtol=1e-15)
    # the Jacobian has one entry per (row, col), never duplicates
    assert len(set(zip(ev.jac_rows.tolist(), ev.jac_cols.tolist()))) == ev.nnz_jac == 10


def test_objective_terms_grouped_and_summed():
    g = Graph()
    x = [g.var(i) for i in range(4)]
    terms = [g.powi(x[i] - float(i + 2), 2) for i in range(4)] + [x[0] * x[1], x[2] * x[3]]
    prob = _problem(g, g.sum(terms), [x[0] + x[1]], 4)
    assert len(prob.objective_groups) == 2
    assert sorted(gr.size for gr in prob.objective_groups) == [2, 4]
    ev = prob.evaluator()
    z = np.array([0.1, 0.2, 0.3, 0.4])
    want_g = 2 * (z - np.arange(2, 6)) + np.array([z[1], z[0], z[3], z[2]])
    np.testing.assert_allclose(ev.grad(z), want_g, rtol=1e-15)
    Hs = ev.hess(z, [0.0], 2.0).toarray()
    want_h = 2.0 * (2 * np.eye(4) + np.kron(np.eye(2), [[0, 1], [1, 0]]))
    np.testing.assert_allclose(Hs, want_h, rtol=1e-15)


@pytest.mark.parametrize("a,b,same", [
    (lambda g, x: 2.0 * g.sin(x[0]), lambda g, x: 3.5 * g.sin(x[1]), True),      # constants
    (lambda g, x: x[0] * g.param(0), lambda g, x: x[2] * g.param(1), True),       # params
    (lambda g, x: x[0] * x[1], lambda g, x: x[2] * x[3], True),
    (lambda g, x: x[0] * x[1], lambda g, x: x[2] * x[2], False),                  # repetition
    (lambda g, x: x[0] ** 2, lambda g, x: x[0] ** 3, False),                      # exponent
    (lambda g, x: g.sin(x[0]), lambda g, x: g.cos(x[0]), False),
    (lambda g, x: x[0] - x[1], lambda g, x: x[1] - x[0], True),
    (lambda g, x: g.sum([x[0], x[1], x[2]]), lambda g, x: g.sum([x[0], x[1]]), False),
])
def test_grouping_is_structural(a, b, same):
    g = Graph()
    x = [g.var(i) for i in range(4)]
    cons = [a(g, x), b(g, x)]
    prob = _problem(g, g.const(0.0), cons, 4, p=[1.0, 2.0])
    assert (len(prob.constraint_groups) == 1) == same
    # and either way the values are right
    z = np.array([0.3, -0.4, 0.5, 0.7])
    from caspar_backend.expr import evaluate
    np.testing.assert_allclose(prob.evaluator().cons(z), evaluate(cons, z, [1.0, 2.0]),
                               rtol=1e-15)
