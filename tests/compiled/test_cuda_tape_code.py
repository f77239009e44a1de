"""compiled/cuda/tape_code.py's generated tapes, compiled for the host with g++ (no
contraction; tests/support/host_cuda.py), against the CPU kernel's interpreter
(kernels/tape_eval.run_tape) on every tape of the bank's problems, the IK and a model
using every op code: the register file bit for bit, on whole groups and on a lane's
share of a chunk; the stub's -1; every op code of compiled/tape.py has a generated form."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from caspar_backend.compiled import tape as T
from caspar_backend.compiled.cuda import tape_code
from caspar_backend.compiled.kernels import slots
from tests.support.host_cuda import host_library

pytest.importorskip("numba")
casadi = pytest.importorskip("casadi")

#: the host's meaning of the source's device markers and intrinsics
HOST = ("#include <math.h>\n#include <string.h>\n"
        "#define CASPAR_DEV\n#define CASPAR_DEV_NOINLINE __attribute__((noinline))\n"
        "#define __restrict__ __restrict\n#define __device__\n"
        "#define CASPAR_INF __builtin_inf()\n#define CASPAR_NAN __builtin_nan(\"\")\n"
        "static inline double __dadd_rn(double a, double b) { return a + b; }\n"
        "static inline double __dsub_rn(double a, double b) { return a - b; }\n"
        "static inline double __dmul_rn(double a, double b) { return a * b; }\n"
        "static inline double __ddiv_rn(double a, double b) { return a / b; }\n")


def _every_op_model():
    """One constraint group per tape op family, its derivatives included (the Hessian
    tapes hold products, powers and the functions' derivatives)."""
    x = casadi.SX.sym("x", 3)
    p = casadi.SX.sym("p", 2)
    a, b, c = x[0], x[1], x[2]
    terms = [casadi.exp(a) * casadi.log(b) + casadi.sqrt(c), casadi.sin(a) * casadi.cos(b),
             casadi.tan(0.3 * a) + casadi.asin(0.5 * b) + casadi.acos(0.4 * c),
             casadi.atan(a) + casadi.sinh(b) * casadi.cosh(c) + casadi.tanh(a * b),
             casadi.fabs(a - b) + casadi.log10(c) + casadi.erf(b),
             casadi.atan2(a, b) + casadi.hypot(b, c) + casadi.fmin(a, b) * casadi.fmax(b, c),
             casadi.sign(a - 0.5) + casadi.floor(3 * b) + casadi.ceil(2 * c),
             casadi.asinh(a) + casadi.acosh(1 + b * b) + casadi.atanh(0.5 * c),
             casadi.if_else(a < b, a ** 3, b ** p[0]) + (a <= c) + (b > c) + (a >= p[1]),
             casadi.logic_and(a > 0.5, b > 0.5) + casadi.logic_or(a == b, b != c)
             + casadi.logic_not(c > 0.7) + a ** b + 1 / (a + 2) - 3 / c + (b - 2) / 5,
             casadi.expm1(0.1 * a) + casadi.log1p(b)]
    f = sum(t * (k + 1) for k, t in enumerate(terms[:3])) + p[0] * a * a
    g = casadi.vertcat(*terms[3:])
    return {"x": x, "p": p, "f": f, "g": g}


def _layout(case):
    from caspar_backend import from_casadi
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import group_layout
    from tests.compiled.test_cuda_straight import _layout as bank_layout

    if case != "every_op":
        return bank_layout(case)
    problem = from_casadi(_every_op_model(), x0=[0.6, 0.7, 0.8], lbx=[0.1] * 3,
                          ubx=[0.95] * 3, p=[1.5, 0.3])
    sub = batch_inputs(problem, None, p=np.array([[1.5, 0.3]]))
    return group_layout(problem, sub.subset(np.arange(sub.size)))


def _cases():
    from tests.support.problem_bank import bank

    return ["every_op", "ik"] + sorted(b.name for b in bank(include_slow=False))


def _slot(lay, k, ints):
    a = lay.Ib[lay.IO[k]:lay.IO[k + 1]] if ints else lay.Fb0[lay.FO[k]:lay.FO[k + 1]]
    return np.ascontiguousarray(a, np.int64 if ints else np.float64)


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{case: (layout, the generated tapes built for the host)} (cases with a layout)."""
    out = {}
    for case in _cases():
        lay = _layout(case)
        if lay is None or not tape_code.program(lay)[3]:
            continue
        src = tape_code.source(lay, chunk=7).replace(tape_code.HEADER, HOST)
        lib = host_library(tmp_path_factory, f"tape_{len(out)}", src)
        lib.caspar_gen_tape.restype = ctypes.c_int
        out[case] = lay, lib
    return out


def test_every_op_code_has_a_generated_form():
    emitted = ({T.CONST, T.LOADX, T.LOADP, T.LOADD, T.MULC, T.ADDC, T.SUBC, T.CSUB, T.DIVC,
                T.CDIV, T.ADD, T.SUB, T.MUL, T.DIV, T.NEG, T.POW, T.POWF, T.IF_ELSE}
               | set(T.UNARY.values()) | set(T.BINARY.values()))
    assert emitted == set(T.REGISTER_OPERANDS) == tape_code.OP_CODES


def test_the_every_op_model_has_most_op_codes(built):
    """CasADi rewrites x / c, x ** c, x > y and log10 before caspar sees them (Pyomo
    models emit them): :func:`test_every_op_code_on_a_synthetic_tape` covers those."""
    lay, _ = built["every_op"]
    op, _, _, ranges = tape_code.program(lay)
    used = {int(o) for s, e in ranges for o in op[s:e]}
    assert used == set(T.REGISTER_OPERANDS) - {T.DIVC, T.POWF, T.BINARY["gt"],
                                               T.UNARY["log10"]}


def test_every_op_code_on_a_synthetic_tape(tmp_path_factory):
    """Each op code once, its operands registers 0..2 (random values, zeros and a NaN
    among the instances) or a leaf's column 0, into register 3 + k: the interpreter's
    register file bit for bit."""
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    codes = sorted(T.REGISTER_OPERANDS)
    E = len(codes)
    op = np.array(codes, np.int64)
    arg = np.zeros((E, 4), np.int64)
    arg[:, 1], arg[:, 2], arg[:, 3] = 1, 2, 3 + np.arange(E)
    cval = np.linspace(-1.7, 2.3, E)
    src = tape_code.program_source(op, arg, cval, [(0, E)], chunk=5)
    lib = host_library(tmp_path_factory, "tape_synthetic",
                       src.replace(tape_code.HEADER, HOST))
    N = C = 6
    rng = np.random.default_rng(3)
    x, p, vt, pt = rng.uniform(0.1, 0.9, N), rng.uniform(-2, 2, N), np.arange(N), \
        np.arange(N)[::-1].copy()
    dt = rng.standard_normal(N)
    reg0 = rng.uniform(-1.5, 1.5, (3 + E) * C)
    reg0[[1, C + 2, 2 * C + 3]] = 0.0
    reg0[4], reg0[5] = np.nan, 1e300
    want, got = reg0.copy(), reg0.copy()
    run_tape(op, np.ascontiguousarray(arg.ravel()), cval, 0, E, x, vt, 0, p, pt, 0, dt, 0,
             N, 0, C, want, 0, C)
    lib.caspar_gen_tape.restype = ctypes.c_int
    assert lib.caspar_gen_tape(
        ctypes.c_longlong(0), ctypes.c_longlong(E), _ptr(x), _ptr(vt), ctypes.c_longlong(0),
        _ptr(p), _ptr(pt), ctypes.c_longlong(0), _ptr(dt), ctypes.c_longlong(0),
        ctypes.c_longlong(N), ctypes.c_longlong(0), ctypes.c_longlong(C), _ptr(got),
        ctypes.c_longlong(0), ctypes.c_longlong(C)) == 0
    bad = [codes[k] for k in range(E) if not np.array_equal(
        want[(3 + k) * C:(4 + k) * C].view(np.int64), got[(3 + k) * C:(4 + k) * C].view(np.int64))]
    assert not bad, f"op codes whose bits differ: {bad}"
    # floor and ceil as NumPy's: a NaN stays NaN, 1e300 stays 1e300
    for code, f in ((T.UNARY["floor"], np.floor), (T.UNARY["ceil"], np.ceil)):
        k = 3 + codes.index(code)
        np.testing.assert_array_equal(want[k * C:(k + 1) * C], f(reg0[:C]))


@pytest.mark.parametrize("case", _cases())
def test_generated_tapes_give_the_interpreters_bits(built, case):
    from caspar_backend.compiled.kernels.tape_eval import run_tape

    if case not in built:
        pytest.skip(f"{case}: no tapes (no layout)")
    lay, lib = built[case]
    op, arg, cval, ranges = tape_code.program(lay)
    gt = _slot(lay, slots.I_GROUPS, True).reshape(-1, T.G_COLS)
    vt, pt = _slot(lay, slots.I_VAR_TABLE, True), _slot(lay, slots.I_PARAM_TABLE, True)
    dt = _slot(lay, slots.F_DATA_TABLE, False)
    flat = np.ascontiguousarray(arg.ravel())
    rng = np.random.default_rng(7)
    x = rng.uniform(0.15, 0.9, int(vt.max(initial=0)) + 1)
    p = rng.uniform(0.2, 1.5, int(pt.max(initial=0)) + 1)
    seen = 0
    for row in gt:
        N, vo, po, do = (int(row[k]) for k in (T.G_N, T.G_VOFF, T.G_POFF, T.G_DOFF))
        for s_col, e_col in tape_code.RANGE_COLUMNS:
            ts, te = int(row[s_col]), int(row[e_col])
            if te <= ts:
                continue
            R = int(arg[ts:te].max()) + 1
            # the whole group as one chunk, then a lane's share of a chunk of 3
            for i0, C, c0, c1 in ((0, N, 0, N), (N // 2, min(3, N - N // 2), 1, 3)):
                c1 = min(c1, C)
                reg0 = rng.standard_normal(R * C)
                want, got = reg0.copy(), reg0.copy()
                run_tape(op, flat, cval, ts, te, x, vt, vo, p, pt, po, dt, do, N, i0, C,
                         want, c0, c1)
                r = lib.caspar_gen_tape(
                    ctypes.c_longlong(ts), ctypes.c_longlong(te), _ptr(x), _ptr(vt),
                    ctypes.c_longlong(vo), _ptr(p), _ptr(pt), ctypes.c_longlong(po),
                    _ptr(dt), ctypes.c_longlong(do), ctypes.c_longlong(N),
                    ctypes.c_longlong(i0), ctypes.c_longlong(C), _ptr(got),
                    ctypes.c_longlong(c0), ctypes.c_longlong(c1))
                assert r == 0
                assert np.array_equal(want.view(np.int64), got.view(np.int64)), (ts, te, i0)
                seen += 1
    assert seen == 2 * len(ranges) or seen >= 2 * len(ranges)


def test_unknown_tapes_and_the_stub_answer_minus_one(built, tmp_path_factory):
    lay, lib = built["ik"]
    _, _, _, ranges = tape_code.program(lay)
    z = np.zeros(4)
    i = np.zeros(4, np.int64)
    ts, te = ranges[0]
    args = (_ptr(z), _ptr(i), ctypes.c_longlong(0), _ptr(z), _ptr(i), ctypes.c_longlong(0),
            _ptr(z), ctypes.c_longlong(0), ctypes.c_longlong(1), ctypes.c_longlong(0),
            ctypes.c_longlong(1), _ptr(z), ctypes.c_longlong(0), ctypes.c_longlong(0))
    assert lib.caspar_gen_tape(ctypes.c_longlong(ts), ctypes.c_longlong(te + 1), *args) == -1
    assert lib.caspar_gen_tape(ctypes.c_longlong(10 ** 9), ctypes.c_longlong(10 ** 9 + 1),
                               *args) == -1
    stub = host_library(tmp_path_factory, "tape_stub", HOST + tape_code.STUB.replace(
        "__device__ ", ""))
    assert stub.caspar_gen_tape(ctypes.c_longlong(ts), ctypes.c_longlong(te), *args) == -1


def test_pattern_key_follows_the_tapes():
    a, b = _layout("ik"), _layout("every_op")
    assert tape_code.pattern_key(a) == tape_code.pattern_key(_layout("ik"))
    assert tape_code.pattern_key(a) != tape_code.pattern_key(b)
    assert tape_code.fits(a) and tape_code.entries(a) > 0
