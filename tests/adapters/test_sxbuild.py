"""The bulk reader's representative builds (adapters/casadi/sxbuild.py) and the
coincidence patterns' distinct columns (sxgroup): the same graphs and verdicts as the
general paths they shortcut."""

from __future__ import annotations

import gc
import itertools

import numpy as np
import pytest

pytest.importorskip("casadi")

import casadi as ca  # noqa: E402

from caspar_backend.adapters.casadi import casadi_to_model  # noqa: E402
from caspar_backend.adapters.casadi import optable as T  # noqa: E402
from caspar_backend.adapters.casadi.sxbuild import TagGraph, _maker, tags_decide  # noqa: E402
from caspar_backend.adapters.casadi.sxgroup import _coincidences, _first_occurrence  # noqa: E402
from caspar_backend import ops as caspar_ops  # noqa: E402
from caspar_backend.expr import Graph  # noqa: E402
from caspar_backend.patterns import shape_key  # noqa: E402

#: every casadi op the builds meet, direct or composed, with its arity
OPS = [(T.CODES[k], 2 if v in T._ARITY2 else 1) for k, v in T.DIRECT.items()] + \
    [(T.CODES[k], ar) for k, (ar, _) in T.COMPOSED.items()]


def _args(g, kinds):
    """Arguments of the kinds: variables, a parameter, and the constants the
    simplifications and folding look at (0, +-1, 0.5, 2, 3)."""
    leaf = {"x": lambda: g.var(0), "y": lambda: g.var(1), "p": lambda: g.param(0),
            "ny": lambda: g.neg(g.var(1))}
    return [leaf[k]() if k in leaf else g.const(float(k)) for k in kinds]


@pytest.mark.parametrize("code,arity", OPS, ids=[T.NAMES[c] for c, _ in OPS])
def test_maker_builds_what_build_op_builds(code, arity):
    # the shortcut skips Graph.apply's checks only: every simplification, fold and
    # interned node is the same, for variables and for the constants rules look at
    kinds = ["x", "y", "p", "ny", "0", "1", "-1", "0.5", "2", "3"]
    make = _maker(code)
    for combo in itertools.product(kinds, repeat=arity):
        g1, g2 = Graph(), Graph()
        try:
            want = T.build_op(g1, code, *_args(g1, combo))
        except Exception as e:              # the same error, or none
            with pytest.raises(type(e)):
                make(g2, *_args(g2, combo))
            continue
        got = make(g2, *_args(g2, combo))
        assert shape_key(got)[0] == shape_key(want)[0], (T.NAMES[code], combo)
        assert shape_key(got)[3] == shape_key(want)[3]
        assert len(g1.nodes) == len(g2.nodes)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("seed", range(20))
def test_coincidence_columns_hold_every_distinct_pattern(seed, native, monkeypatch):
    # instances whose pattern differs from the first's (a further coincidence, a
    # missing one) are among the columns returned: the claims are read from those
    # (by the C++ loop where it can be had, else the first pattern checked in NumPy)
    from caspar_backend.adapters.casadi import sxdag

    monkeypatch.setattr(sxdag, "NATIVE", native)
    rng = np.random.default_rng(seed)
    L, N = int(rng.integers(1, 12)), int(rng.integers(1, 60))
    base = rng.integers(0, L, L)
    V = np.repeat(base[:, None], N, axis=1).astype(np.uint64)
    odd = rng.random(N) < 0.2
    V[:, odd] = rng.integers(0, max(L // 2, 1), (L, int(odd.sum())))
    # V as the value hashes of node ids M (a permutation: each entry its own node)
    M = np.random.default_rng(seed + 100).permutation(V.size).reshape(V.shape)
    vh = np.empty(V.size, np.uint64)
    vh[M] = V
    F, cols = _coincidences(M, vh)
    np.testing.assert_array_equal(F, _first_occurrence(V))
    distinct = {tuple(c) for c in F.T}
    assert distinct == {tuple(F[:, j]) for j in cols}
    assert cols[0] == 0


_LEAF_OPS = ("var", "param", "data", "const")


@pytest.mark.parametrize("op", [k for k in caspar_ops.OPS if k not in _LEAF_OPS])
def test_apply_nodes_is_apply_for_nodes(op):
    # Graph.apply_nodes (templates rebuilt from keys, representatives op by op) makes
    # what Graph.apply makes: simplifications, folding, interning
    arity = caspar_ops.OPS[op].arity
    counts = [arity] if arity is not None else [2, 4]
    attrs = [0, 1, 2, 3] if op == "powi" else [None]
    kinds = ["x", "y", "ny", "0", "1", "-1", "0.5", "2"]
    for n, attr in itertools.product(counts, attrs):
        for combo in itertools.product(kinds, repeat=n):
            g1, g2 = Graph(), Graph()
            try:
                want = g1.apply(op, *_args(g1, combo), attr=attr)
            except Exception as e:
                with pytest.raises(type(e)):
                    g2.apply_nodes(op, tuple(_args(g2, combo)), attr)
                continue
            got = g2.apply_nodes(op, tuple(_args(g2, combo)), attr)
            assert shape_key(got)[0] == shape_key(want)[0], (op, combo, attr)
            assert shape_key(got)[3] == shape_key(want)[3]
            assert len(g1.nodes) == len(g2.nodes)


class _ScratchGraph(Graph):
    """The grouping's scratch graphs, told apart from every other graph."""


class _ScratchTagGraph(TagGraph):
    """The grouping's tag builds' scratch graphs, likewise."""


def test_a_bulk_read_leaves_no_cyclic_garbage(monkeypatch):
    # the representatives' scratch graphs are released once read: the read runs with
    # the cycle collector paused, and its first pass afterwards would otherwise free
    # them all (a tenth of a second on case9241).  Only the scratch graphs are looked
    # for: in a long test session a few other graphs (templates) can turn up in the
    # collector's garbage of that window too, harmlessly
    from caspar_backend.adapters.casadi import sxgroup

    monkeypatch.setattr(sxgroup, "Graph", _ScratchGraph)
    monkeypatch.setattr(sxgroup, "TagGraph", _ScratchTagGraph)
    x = ca.SX.sym("x", 40)
    rows = [x[i] * x[i + 1] * ca.cos(x[i] - x[i + 1]) + k * x[i] ** 2 + ca.sin(x[i + 2])
            for k in (1.5, 2.5) for i in range(0, 30, 3)]
    rows += [x[i] - 2.0 * x[i + 1] for i in range(30)]
    nlp = {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(*rows)}
    casadi_to_model(nlp, bulk=True)                 # imports, libraries, warm caches
    gc.collect()
    was, flags = gc.isenabled(), gc.get_debug()
    gc.disable()
    built = []
    for cls in (_ScratchGraph, _ScratchTagGraph):
        monkeypatch.setattr(cls, "__init__",
                            lambda self, *a: (Graph.__init__(self, *a), built.append(1))[0])
    try:
        model = casadi_to_model(nlp, bulk=True)
        assert "bulk" in model.meta
        gc.set_debug(gc.DEBUG_SAVEALL)              # what a pass would free, kept
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()
        if was:
            gc.enable()
    assert len(built) >= 3                          # the read did build scratch graphs
    assert "_ScratchGraph" not in left, left.count("_ScratchGraph")
    assert "_ScratchTagGraph" not in left, left.count("_ScratchTagGraph")


def test_tags_decide_refuses_what_could_change_the_real_build():
    g = TagGraph()
    assert tags_decide(g, [2.5, -3.5], [1.5], 4.0)
    assert not tags_decide(g, [2.0, 3.5], [], None)          # a builder constant
    assert not tags_decide(g, [-1.0], [], None)               # an _is test
    assert not tags_decide(g, [2.5], [], 2.5)                 # factor = a class value
    assert not tags_decide(g, [2.5], [2.5], None)             # exponent = a class value
    assert tags_decide(g, [2.5, -2.5], [], None)              # no tag negated: distinct
    g.const(-1.0e6 - 0.125)                                   # a negated tag
    assert g.negated and not tags_decide(g, [2.5, -2.5], [], None)
    assert not tags_decide(g, [2.5], [-2.5], None)
    f = TagGraph()
    f.sin(f.const(2.5))
    assert f.folded and not tags_decide(f, [2.5], [], None)
    s = TagGraph()
    s.sum([s.var(0), s.const(2.5), s.const(3.5)])
    assert s.gathered and not tags_decide(s, [2.5, 3.5], [], None)


def test_classes_tags_cannot_decide_are_built_with_their_reals(monkeypatch):
    # a class whose tags cannot decide (values r and -r, and a chain constant negated:
    # the real build's -r is the other class's node) is built with its reals too; the
    # read is the per-node reader's either way
    from caspar_backend.adapters.casadi import sxgroup
    from tests.adapters.test_casadi_bulk import _same_as_per_node

    made = []
    monkeypatch.setattr(sxgroup, "Graph", _ScratchGraph)
    monkeypatch.setattr(_ScratchGraph, "__init__",
                        lambda self, *a: (Graph.__init__(self, *a), made.append(1))[0])
    x = ca.SX.sym("x", 60)
    rows = [(x[i] - 2.5) * (x[i + 1] + -2.5) + 2.0 * x[i + 2] for i in range(0, 20)]
    rows += [x[i] * x[i + 1] + -4.5 * x[i + 2] - 4.5 for i in range(20, 40)]
    rows += [ca.sin(x[i]) * 2.5 + 2.5 * x[i + 1] for i in range(40, 58)]
    nlp = {"x": x, "f": ca.sumsqr(x - 0.5), "g": ca.vertcat(*rows)}
    rng = np.random.default_rng(3)
    assert _same_as_per_node(nlp, [(rng.uniform(0.5, 1.5, 60), np.zeros(0))])
    assert made                                     # some class was built with its reals
