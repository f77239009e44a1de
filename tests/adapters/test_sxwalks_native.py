"""The C++ walks of the bulk SX reader (adapters/casadi/sxwalks_native.py) give the
Numba loops' and the NumPy passes' results bit for bit: every function on the DAGs of
the SX corpus, an AC-OPF and programs past the hashing limits, and the whole bulk read
(blocks, tables, templates) on an AC-OPF and the single-sum Rosenbrock."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import bulk, sxdag, sxdecode, sxexport, sxhash  # noqa: E402
from caspar_backend.adapters.casadi import sxkernels_native  # noqa: E402
from caspar_backend.adapters.casadi import sxwalks_native, sxwalks_numpy  # noqa: E402
from caspar_backend.adapters.casadi import optable as T  # noqa: E402
from caspar_backend.adapters.casadi.nlp import problem_function  # noqa: E402
from caspar_backend.patterns import shape_key  # noqa: E402

from tests.support.casadi_corpus import CASES, build  # noqa: E402

pytestmark = pytest.mark.skipif(sxwalks_native.library() is None,
                                reason="no C++ compiler for the native loops")


def _modules():
    mods = [sxwalks_numpy]
    try:
        from caspar_backend.adapters.casadi import sxwalks
        mods.append(sxwalks)
    except ImportError:
        pass
    return mods


def _equal(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b


def _deep():
    x = ca.SX.sym("x", 6)
    deep = x[0]
    for k in range(sxhash.MAX_DEPTH + 12):          # deeper than hashed
        deep = ca.sin(deep) * x[k % 6] + 0.5
    wide = x[0]
    for k in range(10):                            # a shared prefix: a large tree
        wide = wide * wide + x[k % 6]
    return {"x": x, "f": deep + ca.cos(wide) + x[1] ** 2.5 - x[2] - (x[3] - x[4]),
            "g": ca.vertcat(deep - x[2], wide * x[3], -(x[0] + x[1]) + x[5])}


def _programs():
    from benchmarks.models.acopf import acopf_casadi_polar

    out = [build(n).nlp for n in sorted(CASES) if n.startswith("sx_") and n != "sx_call"]
    return out + [acopf_casadi_polar("case30_ieee")[0], _deep()]


def _sorted_items(r):
    """first_of_each's indices as a set (its order is the implementation's)."""
    return np.sort(r)


@pytest.mark.parametrize("k", range(len(_programs())))
def test_every_walk_is_the_other_implementations(k):
    nlp = _programs()[k]
    fn = problem_function(nlp)
    alg = sxexport.program(fn)
    dag = sxdag.build_dag(alg)
    op, a0, a1, leaf = dag.op, dag.arg0, dag.arg1, dag.leaf
    K = op.size
    rng = np.random.default_rng(k)
    roots = np.concatenate([dag.out, np.flatnonzero(a1 >= 0)[::3]])
    spine = ((op == T.CODES["OP_ADD"]) | (op == T.CODES["OP_SUB"])
             | (op == T.CODES["OP_NEG"])) & (leaf < 0)
    sp = np.flatnonzero(spine)
    # a spine node with one spine parent is a subtree of it (sxterms' rule)
    two = (op[sp] == T.CODES["OP_ADD"]) | (op[sp] == T.CODES["OP_SUB"])
    parents = np.bincount(a0[sp], minlength=K) + np.bincount(a1[sp][two], minlength=K)
    tree = spine & (parents == 1)
    tree[dag.out] = False
    tops = np.flatnonzero(spine & ~tree)
    codes = (T.CODES["OP_ADD"], T.CODES["OP_SUB"], T.CODES["OP_NEG"])
    key = rng.integers(0, 7, 200).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    M = np.stack([dag.out, np.maximum(a0[dag.out], 0)])
    F = np.zeros_like(M)
    F[1] = 1
    for mod in _modules():
        def hashes(m):
            h, vh = np.zeros(K, np.uint64), np.zeros(K, np.uint64)
            size = (leaf != sxdag.NOT_LEAF).astype(np.int64)
            got = m.hash_trees(op, a0, a1, leaf, sxdag.NOT_LEAF, h, vh, size,
                               sxhash.baked(dag), dag.value.view(np.uint64), roots,
                               sxhash.MAX_DEPTH, np.int64(1) << 40)
            return got, h, vh, size

        assert _equal(hashes(sxwalks_native), hashes(mod))
        assert _equal(sxwalks_native.single_writes(alg.w, alg.a, alg.b),
                      mod.single_writes(alg.w, alg.a, alg.b))
        fused = spine & (rng.random(K) < 0.5)
        user = np.where(fused, np.minimum(np.arange(K) + 1, K - 1), -1)
        assert _equal(sxwalks_native.chain_heads(user, fused), mod.chain_heads(user, fused))
        got = sxwalks_native.spine_tour(op, a0, a1, tree, sp, tops, *codes)
        assert _equal(got, tuple(mod.spine_tour(op, a0, a1, tree, sp, tops, *codes)))
        # tops other than the tour roots in order: reversed, repeated, a non-top
        odd = np.r_[tops[::-1][: tops.size // 2], tops[:3], np.flatnonzero(~spine)[:1]]
        got = sxwalks_native.spine_tour(op, a0, a1, tree, sp, odd, *codes)
        assert _equal(got, tuple(mod.spine_tour(op, a0, a1, tree, sp, odd, *codes)))
        assert _equal(_sorted_items(sxwalks_native.first_of_each(key)),
                      _sorted_items(mod.first_of_each(key)))
        args = (op, leaf, dag.attr, dag.value_bits, a0, a1, dag.value_bits)
        assert sxwalks_native.claims_hold(*args, M, F) == mod.claims_hold(*args, M, F)
        assert sxwalks_native.claims_hold(*args, M, 0 * F) == mod.claims_hold(*args, M, 0 * F)


def _blocks(nlp, native):
    saved = sxdag.NATIVE
    sxdag.NATIVE = native
    try:
        fn = problem_function(nlp)
        got = bulk.read_bulk(fn, nlp["f"], nlp.get("g", ca.SX(0, 1)))
    finally:
        sxdag.NATIVE = saved
    out = []
    for b in got.objective_blocks + got.constraint_blocks:
        out.append((repr(shape_key(b.root)[0]), b.var_table, b.param_table, b.data_table,
                    b.rows))
    return out


def test_whole_read_is_the_same():
    from benchmarks.models.acopf import acopf_casadi_polar

    x = ca.SX.sym("x", 300)
    rosen = {"x": x, "f": ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)}
    for nlp in (acopf_casadi_polar("case57_ieee")[0], rosen):
        a, b = _blocks(nlp, True), _blocks(nlp, False)
        assert len(a) == len(b)
        for u, v in zip(a, b):
            assert u[0] == v[0]
            for s, t in zip(u[1:], v[1:]):
                assert (s is None and t is None) or np.array_equal(s, t)


@pytest.mark.parametrize("L", [1, 2, 7, 24, 64, 65, 130])
def test_first_occurrence_is_the_numpy_one(L):
    # columns of one value, a few, all distinct (the per-column hash table at several
    # sizes), and a non-contiguous input
    from caspar_backend.adapters.casadi.sxgroup import _first_occurrence

    rng = np.random.default_rng(L)
    N = 301
    mixed = []
    for k in (1, 2, 5):
        # k patterns (each column relabelled injectively: the values differ, the
        # pattern not), a tenth of the columns random: the rounds and the fall-back
        labels = rng.integers(0, max(L // 2, 1), (k, L))
        which = rng.integers(0, k, N)
        relabel = rng.permutation(10 * L + 10)[None, :] + 1000 * np.arange(N)[:, None]
        V = np.take_along_axis(relabel, labels[which], axis=1).T
        noise = rng.random(N) < 0.1
        V[:, noise] = rng.integers(0, 3, (L, int(noise.sum())))
        mixed.append(V.astype(np.uint64))
    for V in mixed + [rng.integers(0, d, (L, N)).astype(np.uint64) for d in (1, 3, L + 5)]:
        for X in (V, V[:, ::3], V[:, 1:]):
            F, differs = sxkernels_native.first_occurrence(X)
            assert F.dtype == np.int64
            np.testing.assert_array_equal(F, _first_occurrence(X))
            np.testing.assert_array_equal(differs, (F != F[:, :1]).any(axis=0))
            # the same through node ids: X = vh[M]
            M = rng.permutation(X.size).reshape(X.shape)
            vh = np.empty(X.size, np.uint64)
            vh[M] = X
            assert _equal(sxkernels_native.first_occurrence_of(M, vh), (F, differs))


@pytest.mark.parametrize("k", range(len(_programs())))
def test_grouping_loops_are_the_numpy_passes(k):
    # program_uses, the position gather with its op/leaf check, the distinct columns
    from caspar_backend.adapters.casadi import sxgroup

    dag = sxdag.build_dag(sxexport.program(problem_function(_programs()[k])))
    a0, a1, K = dag.arg0, dag.arg1, dag.op.size
    uses = (np.bincount(a0[a0 >= 0], minlength=K) + np.bincount(a1[a1 >= 0], minlength=K)
            + np.bincount(dag.out, minlength=K))
    assert _equal(sxwalks_native.program_uses(a0, a1, dag.out), uses)
    from caspar_backend.adapters.casadi import sxchains

    saved = sxdag.NATIVE
    sxdag.NATIVE = False
    try:
        chains = sxchains.sum_chains(sxdag.SXDag(dag.op, a0, a1, dag.leaf, dag.attr,
                                                 dag.value, dag.out))
    finally:
        sxdag.NATIVE = saved
    assert _equal(sxwalks_native.sum_chains(dag.op, a0, a1, uses, T.CODES["OP_ADD"],
                                            T.CODES["OP_SUB"]), chains)
    key = (dag.op * 7 + np.maximum(a0, 0) % 5).astype(np.uint64)
    _, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    assert _equal(sxkernels_native.repeated(key), cnt[inv.reshape(-1)] > 1)
    bake = sxhash.baked(dag)
    for top in np.unique(np.concatenate([dag.out, a0[dag.out]]))[:40].tolist():
        if top < 0 or dag.leaf[top] != sxdag.NOT_LEAF:
            continue
        rep, parent, arg = sxgroup._program(dag, top)
        first = np.flatnonzero(dag.leaf == sxdag.NOT_LEAF)
        M0 = sxgroup._gather(dag, parent, arg, first)
        bad0 = sxgroup._mismatch(dag, rep, M0, bake)
        M, bad = sxkernels_native.gather_positions(parent, arg, rep, a0, a1, dag.op, dag.leaf,
                                                 first)
        assert _equal(bad | sxgroup._exponent_mismatch(dag, np.asarray(rep), M, bake), bad0)
        assert _equal(M[:, ~bad], M0[:, ~bad])
        X = np.vstack([M0 % 3, M0 % 2])
        fst, inv = sxkernels_native.distinct_columns(X)
        np.testing.assert_array_equal(X[:, fst][:, inv], X)
        assert np.unique(X.T, axis=0).shape[0] == fst.size
        assert np.all(np.diff(fst) > 0) and np.all(inv[fst] == np.arange(fst.size))


@pytest.mark.parametrize("seed", range(40))
def test_plain_is_the_numpy_rules(seed):
    # random DAGs over the ops _plain's rules name (and sin), constants 0, +-1, -0.0,
    # 2.5, equal value hashes and unhashed nodes: the C++ loop decides as the NumPy
    # passes (sxdag.NATIVE off)
    rng = np.random.default_rng(seed)
    names = ("OP_ADD", "OP_SUB", "OP_MUL", "OP_DIV", "OP_NEG", "OP_IF_ELSE_ZERO",
             "OP_FMOD", "OP_COPYSIGN", "OP_SIN")
    # odd seeds: rarely a rule's case (about half of those programs are plain)
    rare = seed % 2 == 1
    p_op = np.array([6, 6, 6, 2, 1, 1, 1, 1, 4] if rare else [1] * 9, float)
    values = [2.5, 3.5, 0.5, 2.5, 3.5, 0.5, 0.0, 1.0] if rare else [0.0, -0.0, 1.0, -1.0, 2.5]
    K = int(rng.integers(8, 40 if not rare else 16))
    n_leaf = int(rng.integers(2, 6))
    op = np.empty(K, np.int64)
    a0, a1 = np.full(K, -1, np.int64), np.full(K, -1, np.int64)
    leaf = np.full(K, sxdag.NOT_LEAF, np.int8)
    value = np.zeros(K)
    for k in range(K):
        if k < n_leaf or rng.random() < 0.15:
            const = rng.random() < (0.25 if rare else 0.5)
            op[k] = T.CODES["OP_CONST" if const else "OP_INPUT"]
            leaf[k] = sxdag.LEAF_CONST if const else sxdag.LEAF_VAR
            value[k] = rng.choice(values) if const else 0.0
            continue
        name = names[int(rng.choice(len(names), p=p_op / p_op.sum()))]
        op[k] = T.CODES[name]
        a0[k] = rng.integers(0, k)
        if name not in ("OP_NEG", "OP_SIN"):
            a1[k] = rng.integers(0, k)
    out = np.flatnonzero(leaf == sxdag.NOT_LEAF)[-2:]
    op = np.r_[op, np.full(out.size, T.CODES["OP_OUTPUT"])]
    a0, a1 = np.r_[a0, out], np.r_[a1, np.full(out.size, -1)]
    leaf, value = np.r_[leaf, np.full(out.size, sxdag.NOT_LEAF, np.int8)], np.r_[value, np.zeros(out.size)]
    dag = sxdag.SXDag(op, a0, a1, leaf, np.full(op.size, -1), value, out)
    vh = rng.integers(0, 4 if not rare else 10 ** 6, op.size).astype(np.uint64)
    hashed = rng.random(op.size) < 0.7
    head = bulk.sum_chains(dag)[0]
    chain = np.flatnonzero((op == T.CODES["OP_ADD"]) | (op == T.CODES["OP_SUB"]))
    gathered = np.unique(head[chain[rng.random(chain.size) < 0.3]])
    got = bulk._plain(dag, vh, hashed, gathered)
    saved = sxdag.NATIVE
    sxdag.NATIVE = False
    try:
        assert got == bulk._plain(dag, vh, hashed, gathered)
    finally:
        sxdag.NATIVE = saved


def _twice_built_sums():
    # equal partial sums built twice (two nodes, equal signatures: merge candidates),
    # negated, scaled and subtracted
    x = ca.SX.sym("x", 8)

    def s():
        return x[0] + x[1] - x[2] + x[3] * x[4] - x[5] + x[6]

    g = ca.vertcat(s() * ca.sin(x[7]), s() * ca.cos(x[7]), 2 * s() + x[7], -s() - x[0],
                   3.5 * s() - (x[1] - x[2]), s() / 4.0 + x[7], s() * 1.5 - x[6])
    return {"x": x, "f": ca.sumsqr(x), "g": g}


def _calls_in_split(monkeypatch, dag, name, real) -> list:
    """The argument tuples ``split_instances(dag, 1)`` passes to ``sxterms.<name>``
    (``real``, still called)."""
    from caspar_backend.adapters.casadi import sxterms

    seen = []

    def spy(*args):
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(sxterms, name, spy)
    sxterms.split_instances(dag, 1)
    return seen


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_merge_signatures_are_the_numpy_passes(k, monkeypatch):
    # merge_candidates' (candidates, n_items) on the split's own inputs, by the C++
    # pass and by the NumPy passes (sxdag.NATIVE off)
    from caspar_backend.adapters.casadi import sxmerge

    nlp = (_programs() + [_twice_built_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    real = sxmerge.merge_candidates
    seen = _calls_in_split(monkeypatch, dag, "merge_candidates", real)
    for args in seen:
        got = real(*args)
        monkeypatch.setattr(sxdag, "NATIVE", False)
        assert _equal(got, real(*args))
        monkeypatch.setattr(sxdag, "NATIVE", True)


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_scaled_is_the_numpy_passes(k, monkeypatch):
    from caspar_backend.adapters.casadi import sxterms

    nlp = (_programs() + [_twice_built_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    op = dag.op
    spine = ((op == T.CODES["OP_ADD"]) | (op == T.CODES["OP_SUB"])
             | (op == T.CODES["OP_NEG"])) & (dag.leaf < 0)
    got = sxterms._scaled(dag, spine)
    monkeypatch.setattr(sxdag, "NATIVE", False)
    assert _equal(got, sxterms._scaled(dag, spine))
    # the last program holds c * S, 2 * S and S / c (casadi writes S * c as c * S)
    assert k < len(_programs()) or (got[0].sum() >= 4 and got[3].any())


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_dag_nodes_are_the_numpy_passes(k, monkeypatch):
    # the whole DAG (leaves, attributes, outputs in order), and the refusals: a call
    # op, an input index 2, outputs out of order
    nlp = (_programs() + [_twice_built_sums()])[k]
    alg = sxexport.program(problem_function(nlp))

    def both(a):
        got = sxdag._nodes(a)
        monkeypatch.setattr(sxdag, "NATIVE", False)
        ref = sxdag._nodes(a)
        monkeypatch.setattr(sxdag, "NATIVE", True)
        return got, ref

    got, ref = both(alg)
    assert _equal(got, ref)
    outs = np.flatnonzero(alg.op == T.CODES["OP_OUTPUT"])
    shuffled = sxdecode.Algorithm(alg.op, alg.w, alg.a, alg.b, alg.idx.copy(), alg.nz.copy(),
                                  alg.value)
    shuffled.nz[outs] = shuffled.nz[outs][::-1]
    got, ref = both(shuffled)
    assert _equal(got, ref)
    for code, field, value in (("OP_CALL", "op", None), ("OP_INPUT", "idx", 2)):
        bad = sxdecode.Algorithm(alg.op.copy(), alg.w, alg.a, alg.b, alg.idx.copy(), alg.nz,
                                 alg.value)
        if value is None:
            bad.op[-1] = T.CODES[code]
        else:
            bad.idx[np.flatnonzero(bad.op == T.CODES[code])[0]] = value
        assert both(bad) == (None, None)


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_spine_refs_are_the_numpy_passes(k, monkeypatch):
    from caspar_backend.adapters.casadi import sxterms

    nlp = (_programs() + [_twice_built_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    op = dag.op
    spine = ((op == T.CODES["OP_ADD"]) | (op == T.CODES["OP_SUB"])
             | (op == T.CODES["OP_NEG"])) & (dag.leaf < 0)
    scaled, S_of, _, _ = sxterms._scaled(dag, spine)
    args = (dag, spine, scaled, S_of, np.flatnonzero(scaled))
    got = sxterms._spine_refs(*args)
    monkeypatch.setattr(sxdag, "NATIVE", False)
    assert _equal(got, sxterms._spine_refs(*args))


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_term_hashes_are_the_numpy_passes(k, monkeypatch):
    # the leaves' hashes and the flags around the walk (the walk itself: above)
    nlp = (_programs() + [_twice_built_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    roots = np.concatenate([dag.out, np.flatnonzero(dag.arg1 >= 0)[::2]])
    got = sxhash.term_hashes(dag, roots)
    monkeypatch.setattr(sxdag, "NATIVE", False)
    assert _equal(got, sxhash.term_hashes(dag, roots))


def _cumulative_sums():
    # partial sums shared by spines (the split gives way) and a scaled spine used twice
    x = ca.SX.sym("x", 6)
    s, outs = x[0], []
    for k in range(1, 6):
        s = s + x[k] * x[k - 1]
        outs.append(s)
    t = x[0] - x[1] + x[2] - x[3]
    u = 2.5 * t
    return {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(*outs, u + x[4], u - x[5])}


@pytest.mark.parametrize("k", range(len(_programs()) + 2))
def test_walked_is_the_numpy_passes(k, monkeypatch):
    from caspar_backend.adapters.casadi import sxterms

    nlp = (_programs() + [_twice_built_sums(), _cumulative_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    real = sxterms._walked
    seen = _calls_in_split(monkeypatch, dag, "_walked", real)
    assert len(seen) == 1
    got = real(*seen[0])
    monkeypatch.setattr(sxdag, "NATIVE", False)
    ref = real(*seen[0])
    assert (got is None and ref is None) or _equal(got, ref)
    # the last program gives way
    assert k < len(_programs()) + 1 or ref is None


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_sharing_counts_are_the_numpy_passes(k, monkeypatch):
    # the sharing rule's per-root counts on the grouping's own inputs, by the C++ loop
    # and by the NumPy passes (sxdag.NATIVE off)
    from caspar_backend.adapters.casadi import nlp as casadi_nlp
    from caspar_backend.adapters.casadi import sxsharing

    nlp = (_programs() + [_twice_built_sums()])[k]
    real, seen = sxsharing._counts, []

    def spy(*args):
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(sxsharing, "_counts", spy)
    casadi_nlp.casadi_to_model(nlp, bulk=True)
    for args in seen:
        got = real(*args)
        monkeypatch.setattr(sxdag, "NATIVE", False)
        assert _equal(got, real(*args))
        monkeypatch.setattr(sxdag, "NATIVE", True)


def _scaled_sums():
    # wide sums scaled (c * S, S * c, 2 * S, S / c, negated, subtracted): distributed
    x = ca.SX.sym("x", 12)

    def s(k):
        return sum((x[(k + j) % 12] - 0.5 * j) ** 2 for j in range(10)) - x[k] * x[k - 1]

    f = 3.0 * s(0) - s(1) * 0.25 + 2 * s(2) - s(3) / 7.0 + ca.sumsqr(x)
    g = ca.vertcat(1.5 * s(4) + x[0], -(s(5) * 2.5) + s(6) / 3.0, x[1] - 4.0 * s(7))
    return {"x": x, "f": f, "g": g}


@pytest.mark.parametrize("k", range(len(_programs()) + 1))
def test_expand_items_is_the_numpy_passes(k, monkeypatch):
    # the split's second level (distributed scaled items) on its own inputs, by the C++
    # loop and by the NumPy passes (sxdag.NATIVE off)
    from caspar_backend.adapters.casadi import sxterms

    nlp = (_programs() + [_scaled_sums()])[k]
    dag = sxdag.build_dag(sxexport.program(problem_function(nlp)))
    real, seen = sxterms._expand, []

    def spy(*args):
        seen.append(args)
        return real(*args)

    monkeypatch.setattr(sxterms, "_expand", spy)
    sxterms.split_instances(dag, 1)
    assert k < len(_programs()) or any(a[1].any() for a in seen)   # items distributed
    for args in seen:
        got = real(*args)
        monkeypatch.setattr(sxdag, "NATIVE", False)
        assert _equal(got, real(*args))
        monkeypatch.setattr(sxdag, "NATIVE", True)
