"""The Pyomo template reader (adapters/pyomo/templates.py, template_blocks.py).

The per-instance walker is the reference: on every model of the adapter corpora the
template reader (forced on with ``template_min_rows=1``) must give the same NLP (x, p,
rows, bounds, shifts, in the same order) and the same pattern groups (templates,
tables, rows, order), and its evaluator must agree with Pyomo's own values and
derivatives (``pyo.value``, ``differentiate``) to 1e-12.  Rows it does not take
(``Expr_if``, max/min, bad leaves, rows without a free variable) are walked per
instance, and errors name the component as the walker's do.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

from caspar_backend.adapters.pyomo import pyomo_to_model  # noqa: E402
from caspar_backend.errors import ModelError, NonFiniteError, UnsupportedOpError  # noqa: E402
from caspar_backend.expr import to_str  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402
from tests.adapters.test_pyomo_adapter import _grad_hess, _sample  # noqa: E402
from tests.support.assertions import close  # noqa: E402
from tests.support.pyomo_corpus import CORPUS  # noqa: E402
from tests.support.pyomo_nlp_models import NLP_MODELS  # noqa: E402

TIGHT = 1e-12


def indexed_mix(n: int = 60):
    """Indexed rows that exercise the reader's rules at once: coefficients 0, 1, -1
    and others (literals vs data), a divisor that is 1 in some rows, integer,
    fractional and square-root exponents, a subexpression written twice, named
    Expressions, mutable and immutable Params, a fixed Var, wide sums (split into
    terms, coefficients +-1 and others), Expr_if rows (walked per instance) and a
    row without a free variable (trivial)."""
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(n)
    m.x = pyo.Var(m.I, bounds=(0.5, 2.0), initialize=lambda m, i: 1.0 + 0.01 * i)
    m.y = pyo.Var(m.I, bounds=(-1.0, 1.0), initialize=0.1)
    m.z = pyo.Var(initialize=0.7)
    m.z.fix()
    m.w = pyo.Var(initialize=0.3)
    m.w.fix()
    m.p = pyo.Param(m.I, initialize=lambda m, i: 0.5 + 0.1 * (i % 4), mutable=True)
    m.c = pyo.Param(m.I, initialize=lambda m, i: [0.0, 1.0, -1.0, 2.5][i % 4])
    tau = [1.0 if i % 3 == 0 else 1.0 + 0.05 * i for i in range(n + 1)]
    ex = [2, 1.5, 0.5, 3][:]

    def nxt(i):
        return i % n + 1

    m.e = pyo.Expression(m.I, rule=lambda m, i: m.x[i] * m.y[nxt(i)] - m.c[i] * m.x[nxt(i)])
    m.flow = pyo.Constraint(m.I, rule=lambda m, i: m.y[i] == m.x[i] * m.x[nxt(i)] / tau[i] * (
        m.c[i] * pyo.cos(m.y[i] - m.y[nxt(i)]) + 0.3 * pyo.sin(m.y[i] - m.y[nxt(i)])))
    m.pw = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** ex[i % 4] + m.p[i] * m.y[i]
                          + m.z * m.x[nxt(i)] <= 10 + i)
    m.named = pyo.Constraint(m.I, rule=lambda m, i: (-1, m.e[i] + m.c[i] * m.e[nxt(i)], 4))

    def wide(m, i):
        if i % 5:
            return pyo.Constraint.Skip
        ks = [(i + k) % n + 1 for k in range(10)]
        if i % 10:                  # a wide linear row, then one of nonlinear terms
            return sum([1, -1, 2.0, -0.5, 1][k % 5] * m.x[j] for k, j in enumerate(ks)) == 0.5
        return sum(m.p[j] * m.y[j] ** 2 for j in ks[:9]) - m.w == 0.5
    m.wide = pyo.Constraint(m.I, rule=wide)
    m.cond = pyo.Constraint(m.I, rule=lambda m, i: pyo.Expr_if(m.x[i] >= 1.2, m.y[i], -m.y[i])
                            + m.x[i] <= 5 if i % 7 == 0 else pyo.Constraint.Skip)
    m.fixed_only = pyo.Constraint(expr=m.z + 2 * m.w <= 3)
    m.obj = pyo.Objective(expr=sum((m.x[i] - 1.1) ** 2 + m.p[i] * m.y[i] ** 2 for i in m.I))
    return m


MODELS = {**{f"corpus.{k}": v for k, v in CORPUS.items()},
          **{f"nlp.{k}": v for k, v in NLP_MODELS.items()}, "indexed_mix": indexed_mix}


def _both(m):
    return pyomo_to_model(m, templates=False), pyomo_to_model(m, templates=True,
                                                              template_min_rows=1)


def _same_groups(pa: Problem, pb: Problem) -> None:
    assert len(pa.groups) == len(pb.groups)
    for g, h in zip(pa.groups, pb.groups):
        assert (g.kind, g.size) == (h.kind, h.size)
        assert to_str(g.root) == to_str(h.root)
        for t in ("var_table", "param_table", "data_table", "rows"):
            np.testing.assert_array_equal(getattr(g, t), getattr(h, t), err_msg=t)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_same_nlp_and_groups_as_the_walker(name):
    """Same x, p, rows, bounds and shifts in the same order, and the same pattern
    groups, table for table."""
    a, b = _both(MODELS[name]())
    # every row of these is Expr_if / max / min: walked; every other model has blocks
    assert bool(b.constraint_blocks) == (name not in ("corpus.expr_if", "corpus.min_max"))
    ma, mb = a.meta["pyomo"], b.meta["pyomo"]
    for attr in ("x_vars", "p_objs", "constraints"):
        assert [id(o) for o in getattr(ma, attr)] == [id(o) for o in getattr(mb, attr)], attr
    for attr in ("lbx", "ubx", "lbg", "ubg", "x0", "p"):
        np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr), err_msg=attr)
    np.testing.assert_array_equal(ma.shift, mb.shift)
    np.testing.assert_array_equal(ma.trivial_rows, mb.trivial_rows)
    _same_groups(Problem(a), Problem(b))


def _check_tight(nlp, ev, x, rng):
    """Values and first and second derivatives equal to Pyomo's own to 1e-12."""
    mp = nlp.meta["pyomo"]
    mp.load_x(x)
    close(mp.body_values(ev.cons(x)), [pyo.value(c.body) for c in mp.constraints], TIGHT)
    lam = rng.normal(size=nlp.m)
    jac = np.zeros((nlp.m, nlp.n))
    h = np.zeros((nlp.n, nlp.n))
    for j, c in enumerate(mp.constraints):
        jac[j], hj = _grad_hess(c.body, mp.x_vars)
        h += lam[j] * hj
    close(ev.jac(x).toarray(), jac, TIGHT)
    close(ev.hess(x, lam, obj_factor=0.0).toarray(), h, TIGHT)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_values_and_derivatives_equal_pyomos(name):
    m = MODELS[name]()
    a, b = _both(m)
    eva, evb = Problem(a).evaluator(), Problem(b).evaluator()
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(2):
        x = _sample(m, b.meta["pyomo"], rng)
        _check_tight(b, evb, x, rng)
        lam = rng.normal(size=b.m)
        for fa, fb in ((eva.cons(x), evb.cons(x)), (eva.jac(x).toarray(), evb.jac(x).toarray()),
                       (eva.hess(x, lam).toarray(), evb.hess(x, lam).toarray())):
            close(fb, fa, TIGHT)


def test_the_reader_takes_what_it_can_and_walks_the_rest():
    """indexed_mix: Expr_if rows and the trivial row are walked per instance (they are
    the only rows in ``constraints``); everything else arrives as blocks, wide rows
    split into terms."""
    m = indexed_mix()
    nlp = pyomo_to_model(m, templates=True)     # the 60-row components qualify
    mp = nlp.meta["pyomo"]
    walked = sorted(mp.constraints[j].parent_component().name for j in nlp.constraint_rows)
    assert walked == ["cond"] * len(m.cond) + ["fixed_only"]
    assert mp.trivial_rows.tolist() == [mp.constraints.index(m.fixed_only)]
    blocks = nlp.constraint_blocks
    covered = np.concatenate([b.rows for b in blocks] + [nlp.constraint_rows])
    assert set(covered.tolist()) == set(range(nlp.m))
    wide_rows = {j for j, c in enumerate(mp.constraints) if c.parent_component() is m.wide}
    split = [b for b in blocks if set(b.rows.tolist()) & wide_rows]
    assert sum(b.size for b in split) > len(wide_rows)      # several instances per row


def test_small_models_keep_the_walker():
    """Below TEMPLATE_MIN_ROWS rows per component every row is an expression."""
    nlp = pyomo_to_model(NLP_MODELS["hs071"]() if "hs071" in NLP_MODELS else CORPUS["hs071"](),
                         templates=True)
    assert not nlp.constraint_blocks and len(nlp.constraints) == nlp.m


def test_answers_equal_the_walkers():
    """A solve of the polar AC-OPF gives the same iterations and objective bits."""
    m = NLP_MODELS["acopf_3bus"]()
    out = []
    for nlp in _both(m):
        r = Problem(nlp).solve(print_level=0)
        out.append((r.status, r.iterations, r.f.hex()))
    assert out[0] == out[1]


@pytest.mark.parametrize("bad", ["no_value", "inf_param", "external"])
def test_errors_name_the_component_as_the_walker_does(bad):
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(40)
    m.x = pyo.Var(m.I, bounds=(0, 1))
    if bad == "no_value":
        m.q = pyo.Param(m.I, mutable=True)          # no value
        rule = lambda m, i: m.q[i] * m.x[i] ** 2 <= 1  # noqa: E731
        exc = ModelError
    elif bad == "inf_param":
        m.q = pyo.Param(m.I, initialize=lambda m, i: math.inf if i == 17 else 2.0)
        rule = lambda m, i: m.q[i] * m.x[i] ** 2 <= 1  # noqa: E731
        exc = NonFiniteError
    else:
        m.f = pyo.ExternalFunction(lambda a: a * a)
        rule = lambda m, i: m.f(m.x[i]) <= 1  # noqa: E731
        exc = UnsupportedOpError
    m.c = pyo.Constraint(m.I, rule=rule)
    msgs = []
    for kw in ({"templates": False}, {"templates": True}):
        with pytest.raises(exc) as info:
            pyomo_to_model(m, **kw)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    assert "c[" in msgs[1] or "q[" in msgs[1]


@pytest.mark.parametrize("value", [0, -3, 2.5, "32"])
def test_template_min_rows_is_checked(value):
    with pytest.raises(ModelError, match="template_min_rows"):
        pyomo_to_model(CORPUS["hs071"](), templates=True, template_min_rows=value)


def test_solver_factory_re_solves_a_templated_model_without_recompiling():
    """SolverFactory('caspar') on a model with a 40-row component (read as templates,
    the default): the answer of the walker's problem, and a new mutable Param value
    re-read without recompiling."""
    import caspar_backend  # noqa: F401  (registers SolverFactory('caspar'))

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(40)
    m.x = pyo.Var(pyo.RangeSet(41), bounds=(-2, 2), initialize=0.5)
    m.y = pyo.Var(m.I, bounds=(0, 3), initialize=1.0)
    m.c = pyo.Param(m.I, initialize=lambda m, i: 0.1 + 1e-3 * i, mutable=True)
    m.eq = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 + m.x[i + 1] * m.y[i]
                          - pyo.sin(m.x[i]) == m.c[i])
    m.obj = pyo.Objective(expr=sum((m.x[i] - 0.3) ** 2 + 0.1 * m.y[i] for i in m.I))
    opt = pyo.SolverFactory("caspar")
    for shift in (0.0, 0.05):
        for i in m.I:
            m.c[i] = 0.1 + 1e-3 * i + shift
        ref = Problem(pyomo_to_model(m, templates=False)).solve(print_level=0)
        res = opt.solve(m, options={"print_level": 0})
        assert opt.compilations == 1
        assert res.solver.statistics.black_box.number_of_iterations == ref.iterations
        assert pyo.value(m.obj) == pytest.approx(ref.f, rel=1e-12, abs=1e-14)


def test_the_template_reader_is_the_default():
    """templates=True is the default; templates=False forces the walker; anything else
    is refused, naming the argument."""
    m = indexed_mix()
    assert pyomo_to_model(m).constraint_blocks
    assert not pyomo_to_model(m, templates=False).constraint_blocks
    with pytest.raises(ModelError, match="templates must be True or False"):
        pyomo_to_model(m, templates="yes")
