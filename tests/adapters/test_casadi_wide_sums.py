"""An objective written as one CasADi SX sum: a constant times a wide sum is
distributed into its terms (adapters/casadi/sums.py), so the terms group as one template
per shape and setup stays linear in the number of terms (docs/grouping-rules.md, "Wide
scaled sums")."""

from __future__ import annotations

import casadi as ca
import numpy as np
import pytest

from caspar_backend.adapters.casadi import casadi_to_model, from_casadi
from caspar_backend.adapters.casadi.sums import SCALE_MIN_TERMS
from caspar_backend.casadi import nlpsol


def chained_rosenbrock(N):
    x = ca.SX.sym("x", N)
    return x, ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)


def _shape(problem):
    """(number of groups, template node counts, NumPy source lines): what grows when a
    wide sum becomes one template again."""
    return (len(problem.groups), sorted(len(g.graph) for g in problem.groups),
            len(problem.numpy_source().splitlines()))


def test_single_sum_setup_is_size_independent():
    # deterministic guard against quadratic setup: before the fix 100*sumsqr(...) was
    # one template holding all N terms (template size and source ~ N); now the group
    # count, the templates and the generated code do not depend on N, and the DAG the
    # reader builds grows by a constant number of nodes per term
    small, large = 200, 2000
    shapes, nodes = [], []
    for N in (small, large):
        x, f = chained_rosenbrock(N)
        pr = from_casadi({"x": x, "f": f})
        shapes.append(_shape(pr))
        nodes.append(len(pr.model.graph))
        assert [g.size for g in pr.groups] == [N - 1, N - 1]
    assert shapes[0] == shapes[1]
    assert shapes[0][0] == 2
    per_term_small = nodes[0] / small
    per_term_large = nodes[1] / large
    assert per_term_large <= per_term_small * 1.05


@pytest.mark.parametrize("build", [
    lambda x: ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2),
    lambda x: ca.sumsqr(x) / 4 - 0.5 * ca.sum1(ca.sin(x[1:]) * x[:-1]) + 3 * (x[0] + x[1]),
    lambda x: 2.5 * (ca.sum1(x ** 4) - 3 * ca.sumsqr(x[2:] - x[:-2])),
    lambda x: -7 * ca.sumsqr(ca.exp(0.1 * x) - 1),
], ids=["rosenbrock", "div-neg-short", "nested", "scaled-root"])
def test_distributed_objective_matches_casadi(build):
    N = 40
    x = ca.SX.sym("x", N)
    f = build(x)
    pr = from_casadi({"x": x, "f": f})
    ev = pr.evaluator("cpu")
    F = ca.Function("F", [x], [f, ca.gradient(f, x), ca.hessian(f, x)[0]])
    rng = np.random.default_rng(7)
    for _ in range(5):
        z = rng.uniform(-1.5, 1.5, N)
        f0, g0, H0 = (np.array(v) for v in F(z))
        scale = max(1.0, abs(f0))
        assert abs(ev.obj(z) - f0) <= 1e-12 * scale
        g = np.asarray(ev.grad(z), float)
        assert np.max(np.abs(g - g0.ravel())) <= 1e-12 * max(1.0, np.max(np.abs(g0)))
        H = ev.hess(z, np.zeros(0), 1.0).toarray()
        assert np.max(np.abs(H - H0)) <= 1e-12 * max(1.0, np.max(np.abs(H0)))


def test_short_and_shared_scaled_sums_stay_whole():
    x = ca.SX.sym("x", 20)
    short = ca.sumsqr(x[:SCALE_MIN_TERMS - 1])
    shared = ca.sum1(x)              # a partial sum on two spines: the objective's, g's
    f = 3 * short + ca.sumsqr(x) + 2 * shared
    g = shared + x[0] * x[1]
    # the per-node reader's rule (the bulk reader splits every scaled sum)
    m = casadi_to_model({"x": x, "f": f, "g": g}, bulk=False)
    terms = m.objective.args
    # 20 squares, and two products: 3 * (short sum) and 2 * (shared sum), each whole
    assert [t.op for t in terms].count("powi") == 20
    scaled = [t for t in terms if t.op == "mul"]
    assert len(scaled) == 2 and all(t.args[1].op == "sum" for t in scaled)
    wide = 3 * ca.sumsqr(x[:SCALE_MIN_TERMS])
    m = casadi_to_model({"x": x, "f": wide + x[3]}, bulk=False)
    assert len(m.objective.args) == SCALE_MIN_TERMS + 1


def test_rosenbrock_solution_unchanged_against_ipopt():
    x, f = chained_rosenbrock(300)
    S = nlpsol("S", "caspar", {"x": x, "f": f},
               {"print_time": False, "caspar": {"print_level": 0}})
    r = S(x0=0.5)
    ip = ca.nlpsol("I", "ipopt", {"x": x, "f": f},
                   {"print_time": False, "ipopt": {"print_level": 0, "sb": "yes"}})
    ri = ip(x0=0.5)
    assert S.stats()["return_status"] == "Solve_Succeeded"
    assert S.stats()["iter_count"] == ip.stats()["iter_count"]
    assert np.allclose(np.array(r["x"]), np.array(ri["x"]), atol=1e-8)
