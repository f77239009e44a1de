"""The chained benchmark problem (benchmarks/models/chain.py): its three builders --
row by row, from TemplateBlocks, and the CasADi reference -- are one problem."""

import numpy as np
import pytest

from benchmarks.models.chain import chain_blocks, chain_casadi, chain_graph
from caspar_backend import Problem

ca = pytest.importorskip("casadi")


def test_builders_agree_with_casadi():
    N = 40
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, N + 2)
    lam = rng.uniform(-1, 1, N)
    nlp, args = chain_casadi(N)
    X, P = nlp["x"], nlp["p"]
    L = ca.SX.sym("l", N)
    F = ca.Function("F", [X, P, L], [nlp["f"], nlp["g"], ca.gradient(nlp["f"], X),
                                     ca.jacobian(nlp["g"], X),
                                     ca.hessian(nlp["f"] + ca.dot(L, nlp["g"]), X)[0]])
    f, g, gf, J, H = (np.array(v.full()) for v in F(x, args["p"], lam))
    for model in (chain_graph(N), chain_blocks(N)):
        ev = Problem(model).evaluator("cpu")
        assert float(ev.obj(x)) == pytest.approx(f.item(), rel=1e-13)
        np.testing.assert_allclose(ev.cons(x, np.zeros(N)), g.ravel(), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(ev.grad(x, np.zeros(N + 2)), gf.ravel(), rtol=1e-13,
                                   atol=1e-13)
        Jd = np.zeros((N, N + 2))
        np.add.at(Jd, (ev.jac_rows, ev.jac_cols), ev.jac_values(x, np.zeros(len(ev.jac_rows))))
        np.testing.assert_allclose(Jd, J, rtol=1e-13, atol=1e-13)
        Hd = np.zeros((N + 2, N + 2))
        np.add.at(Hd, (ev.hess_rows, ev.hess_cols),
                  ev.hess_values(x, lam, 1.0, np.zeros(len(ev.hess_rows))))
        Hd = Hd + np.tril(Hd, -1).T
        np.testing.assert_allclose(Hd, H, rtol=1e-12, atol=1e-12)


def test_blocks_build_two_groups_and_solve_as_ipopt(ipopt):
    N = 500
    prob = Problem(chain_blocks(N))
    assert len(prob.objective_groups) == 1 and len(prob.constraint_groups) == 1
    r = prob.solve(print_level=0, tol=1e-8)
    nlp, args = chain_casadi(N)
    ref = ipopt(nlp, args)
    assert r.status == "Solve_Succeeded"
    assert r.f == pytest.approx(ref.f, rel=1e-8)
    assert r.iterations == ref.iterations
