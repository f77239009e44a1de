"""The tape builder (compiled/tape.py) against the interpreter (kernels/tape_eval.py):
every op code has its branch, and constant operands folded into instructions give the
values the unfolded instructions give."""
import inspect
import math
import re

import numpy as np
import pytest

from caspar_backend.compiled import tape
from caspar_backend.compiled.tape import CONST, TapeBuilder
from caspar_backend.expr import Graph

pytest.importorskip("numba")


def _codes():
    named = {getattr(tape, k) for k in ("CONST", "LOADX", "LOADP", "LOADD", "MULC", "ADDC",
                                        "SUBC", "CSUB", "DIVC", "CDIV", "ADD", "SUB", "MUL",
                                        "DIV", "NEG", "POW", "POWF", "IF_ELSE")}
    return named | set(tape.UNARY.values()) | set(tape.BINARY.values())


def test_every_op_code_has_one_interpreter_branch():
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    src = inspect.getsource(run_tape.py_func)
    branches = [int(c) for c in re.findall(r"\bo == (\d+)", src)]
    assert len(branches) == len(set(branches))
    assert set(branches) == _codes()


def test_every_op_code_has_its_register_operands():
    assert set(tape.REGISTER_OPERANDS) == _codes()


@pytest.mark.parametrize("vector_min", [0, 10 ** 9])
def test_registers_are_reused_and_every_value_is_read_before_its_register_is(
        vector_min, monkeypatch):
    """Registers allocated by liveness: a random expression DAG with shared nodes (each
    read by later ones far down the tape) gives, through the interpreter, the values a
    direct evaluation gives, bit for bit, for a chunk of instances, in fewer registers
    than instructions; no destination is one of its instruction's operands.  Both ways
    of finding the last uses (NumPy from VECTOR_LAST_USES_MIN instructions, a loop
    below) give the same allocation."""
    monkeypatch.setattr(tape, "VECTOR_LAST_USES_MIN", vector_min)
    g = Graph()
    rng = np.random.default_rng(11)
    nodes = [g.var(j) for j in range(4)]
    kinds = ("add", "mul", "sub", "sin", "exp")
    for _ in range(300):
        k = kinds[rng.integers(len(kinds))]
        if k in ("sin", "exp"):
            a = nodes[rng.integers(max(0, len(nodes) - 20), len(nodes))]
            nodes.append(g._intern(k, (g._intern("mul", (a, nodes[0]), None),), None))
        else:
            a, b = (nodes[i] for i in rng.integers(0, len(nodes), 2))
            nodes.append(g._intern(k, (a, b), None))
    roots = [nodes[i] for i in (-1, -7, 150, 40, -1)]
    tb = TapeBuilder()
    t = tb.tape(roots)
    ops = list(zip(tb.op, tb.a0, tb.a1, tb.a2, tb.dst))[t.start:t.end]
    assert t.registers < (t.end - t.start) // 4
    for code, a0, a1, a2, d in ops:
        assert d not in (a0, a1, a2)[:tape.REGISTER_OPERANDS[code]]
    X = rng.uniform(-0.3, 0.3, (4, 3))          # 3 instances in one chunk

    def direct(n, c, memo):
        if n.id not in memo:
            v = [direct(a, c, memo) for a in n.args]
            memo[n.id] = {"var": lambda: X[int(n.attr), c], "add": lambda: v[0] + v[1],
                          "mul": lambda: v[0] * v[1], "sub": lambda: v[0] - v[1],
                          "sin": lambda: math.sin(v[0]), "exp": lambda: math.exp(v[0])}[n.op]()
        return memo[n.id]

    from caspar_backend.compiled.kernels.tape_eval import run_tape

    reg = np.full(t.registers * 3, np.nan)
    vt = np.arange(12, dtype=np.int64)          # variable a of instance i: x[3 a + i]
    empty_i, empty_f = np.zeros(1, np.int64), np.zeros(1)
    run_tape.py_func(np.asarray(tb.op, np.int64), _arg(tb), np.asarray(tb.c), t.start, t.end,
                     X.ravel(), vt, 0, empty_f, empty_i, 0, empty_f, 0, 3, 0, 3, reg, 0, 3)
    for c in range(3):
        memo = {}
        assert [reg[r * 3 + c] for r in t.outputs] == [direct(n, c, memo) for n in roots]


def _arg(tb):
    return np.stack([tb.a0, tb.a1, tb.a2, tb.dst], axis=1).astype(np.int64).ravel()


def _run(tb, t, x):
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    s, e = t.start, t.end
    op = np.asarray(tb.op, np.int64)
    arg = _arg(tb)
    cval = np.asarray(tb.c, np.float64)
    reg = np.full(t.registers, np.nan)
    vt = np.arange(len(x), dtype=np.int64)
    empty_i, empty_f = np.zeros(1, np.int64), np.zeros(1)
    run_tape.py_func(op, arg, cval, s, e, np.asarray(x, float), vt, 0, empty_f, empty_i, 0,
                     empty_f, 0, 1, 0, 1, reg, 0, 1)
    return reg


def test_constant_operands_fold_into_instructions_with_the_same_values():
    g = Graph()
    x, y = g.var(0), g.var(1)
    c, d = g.const(2.5), g.const(-0.75)

    def node(op, *args, attr=None):
        return g._intern(op, tuple(args), attr)

    X, Y = 1.3, -0.4
    cases = [   # (expression, its value as the unfolded instructions compute it)
        (node("add", x, c), X + 2.5), (node("add", c, x), 2.5 + X),
        (node("mul", c, y), 2.5 * Y), (node("mul", y, d), Y * -0.75),
        (node("sub", x, c), X - 2.5), (node("sub", c, x), 2.5 - X),
        (node("div", x, d), X / -0.75), (node("div", d, y), -0.75 / Y),
        (node("pow", x, c), X ** 2.5), (node("pow", c, x), 2.5 ** X),
        (node("powi", y, attr=-3), 1.0 / ((Y * Y) * Y)),
        (node("sum", c, x, d, y), ((2.5 + X) + -0.75) + Y),
        (node("lincomb", c, x, y, d), 2.5 * X + Y * -0.75),
        (node("mul", c, d), 2.5 * -0.75), (c, 2.5),
        (node("sin", node("mul", x, c)), math.sin(X * 2.5)),
    ]
    tb = TapeBuilder()
    t = tb.tape([expr for expr, _ in cases])
    reg = _run(tb, t, [X, Y])
    for (expr, want), r in zip(cases, t.outputs):
        assert reg[r] == want, expr.op
    # a register for a constant only where a root or an operand with no folded form
    # needs one: c (a root, and one side of c * d), once
    assert tb.op[t.start:t.end].count(CONST) == 1


def test_a_tape_of_constants_alone_holds_their_instructions():
    g = Graph()
    c = g.const(3.0)
    tb = TapeBuilder()
    tb.tape([g.const(1.0)])
    t = tb.tape([c, c, g.const(-2.0)])
    assert t.end - t.start == 2 and tb.op[t.start:t.end] == [CONST, CONST]
    assert list(_run(tb, t, [0.0])[t.outputs]) == [3.0, 3.0, -2.0]


def test_a_chunk_of_instances_gives_each_instance_its_own_values():
    """One pass over a tape for instances i0 .. i0 + C - 1 of a group of N (register r
    of instance i0 + c in reg[r C + c]) equals C passes of one instance."""
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    g = Graph()
    x0, x1, p0, d0 = g.var(0), g.var(1), g.param(0), g.data(0)

    def node(op, *args, attr=None):
        return g._intern(op, tuple(args), attr)

    roots = [node("add", node("mul", x0, p0), node("sin", x1)),
             node("div", g.const(2.0), node("sub", x1, d0)),
             node("if_else", node("lt", x0, x1), x0, node("exp", x1)), g.const(4.0)]
    tb = TapeBuilder()
    s, e, regs, R = tb.tape(roots)
    op = np.asarray(tb.op, np.int64)
    arg = _arg(tb)
    cval = np.asarray(tb.c, np.float64)
    N = 7
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, 20)
    vt = rng.permutation(20)[:2 * N].astype(np.int64)      # (2, N) column-major by instance
    p = rng.uniform(-1, 1, 5)
    pt = rng.integers(0, 5, N).astype(np.int64)
    dt = rng.uniform(-1, 1, N)

    def rows(i0, C, lanes=1):
        from caspar_backend.compiled.kernels.team import lane_share

        reg = np.full(R * C, np.nan)
        for lane in range(lanes):       # a team's lanes, each its share of the chunk
            run_tape.py_func(op, arg, cval, s, e, x, vt, 0, p, pt, 0, dt, 0, N, i0, C, reg,
                             *lane_share.py_func(C, lane, lanes))
        return reg.reshape(R, C)[regs]

    one = np.concatenate([rows(i, 1) for i in range(N)], axis=1)
    assert np.array_equal(np.concatenate([rows(0, 4), rows(4, 3)], axis=1), one)
    assert np.array_equal(np.concatenate([rows(0, 4, 3), rows(4, 3, 2)], axis=1), one)
    want = [x[vt[i]] * p[pt[i]] + math.sin(x[vt[N + i]]) for i in range(N)]
    assert list(one[0]) == want


def test_floor_and_ceil_are_numpys():
    """The interpreter's floor and ceil of a NaN, of values past 2^52 and 2^63, of
    halves: NumPy's (math.floor's int64 would turn a NaN into -2^63)."""
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    v = np.array([np.nan, 1e300, -1e300, 2.0 ** 60 + 0.0, -2.5, 2.5, 0.5, -0.5, 7.0])
    C = v.size
    op = np.array([tape.UNARY["floor"], tape.UNARY["ceil"]], np.int64)
    arg = np.array([0, 0, 0, 1, 0, 0, 0, 2], np.int64)
    reg = np.concatenate([v, np.zeros(2 * C)])
    z = np.zeros(1)
    i = np.zeros(1, np.int64)
    run_tape(op, arg, np.zeros(2), 0, 2, z, i, 0, z, i, 0, z, 0, C, 0, C, reg, 0, C)
    np.testing.assert_array_equal(reg[C:2 * C], np.floor(v))
    np.testing.assert_array_equal(reg[2 * C:], np.ceil(v))
