"""compiled/cuda/straight.py's generated chains, compiled for the host with g++ (no
contraction; tests/support/host_cuda.py), against the CPU kernels' own loops
(kernels/qdldl.ldl_eliminate, ldl_forward, ldl_backward) on the layouts of real
problems: L, D, 1/D and the substitutions' results bit for bit, the same stop at an
exact zero pivot, the stub's -1 for every function."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from caspar_backend.compiled.cuda import straight
from caspar_backend.compiled.kernels import qdldl, slots
from tests.support.host_cuda import host_library

#: the host's meaning of the source's device markers
HOST = ("#define CASPAR_DEV\n#define CASPAR_DEV_NOINLINE __attribute__((noinline))\n"
        "#define __restrict__ __restrict\n#define __device__\n")
CASES = ("ik", "optimal_control_200", "hs071", "fixed_variables", "ring_inequalities",
         "degenerate_duplicate_constraints")


def _layout(case):
    from caspar_backend import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import group_layout
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp

    if case == "ik":
        nlp, bounds = arm_ik()
        problem, inputs = from_casadi(nlp, **bounds), dict(p=arm_targets(2, seed=1))
    else:
        d = {b.name: b for b in bank(include_slow=False)}[case].build()
        problem = from_casadi(_nlp(d))
        inputs = dict(x0=np.asarray(d["x0"], float)[None, :],
                      **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")})
    sub = batch_inputs(problem, None, **inputs)
    return group_layout(problem, sub.subset(np.arange(sub.size)))


def _ptr(a):
    return ctypes.c_void_p(a.ctypes.data)


def _slot(F, lay, k):
    return F[lay.FO[k]:lay.FO[k + 1]]


def _values(lay, rng, zero_column=None):
    """Values on C's pattern: off-diagonals N(0, 1), diagonals +-(5 + |N|) by column
    parity; column ``zero_column`` all zero (an exact zero pivot there)."""
    s = straight.structure(lay)
    Cp, Ci = s["C_INDPTR"], s["C_INDICES"]
    col = np.repeat(np.arange(len(Cp) - 1), np.diff(Cp))
    v = rng.standard_normal(len(Ci))
    diag = Ci == col
    v[diag] = np.where(col[diag] % 2 == 0, 1.0, -1.0) * (5.0 + np.abs(v[diag]))
    if zero_column is not None:
        v[col == zero_column] = 0.0
    return v


def _cpu(lay, values):
    """The CPU kernel's elimination on ``values``: (status, L, D, 1/D, the buffer)."""
    F = np.array(lay.Fb0, np.float64)
    _slot(F, lay, slots.F_C_VALUES)[:] = values
    for k in (slots.F_L_VALUES, slots.F_LDL_D, slots.F_LDL_DINV):
        _slot(F, lay, k)[:] = np.nan
    _slot(F, lay, slots.F_LDL_YVALS)[:] = 0.0
    _slot(F, lay, slots.F_LDL_D)[:] = 0.0       # load_values zeroes D
    ok = qdldl.ldl_eliminate(F, lay.FO, lay.Ib, lay.IO)
    return ok, *(_slot(F, lay, k).copy() for k in (slots.F_L_VALUES, slots.F_LDL_D,
                                                   slots.F_LDL_DINV)), F


def _same(a, b):
    return np.array_equal(np.asarray(a).view(np.int64), np.asarray(b).view(np.int64))


@pytest.fixture(scope="module", params=CASES)
def built(request, tmp_path_factory):
    lay = _layout(request.param)
    src = straight.source(lay, chunk=16, sub_chunk=32).replace(straight.HEADER, HOST)
    return lay, host_library(tmp_path_factory, f"straight_{request.param}", src)


def test_elimination_and_substitutions_bit_for_bit(built):
    lay, so = built
    rng = np.random.default_rng(7)
    n = int(lay.sizes["nkkt"])
    for _ in range(3):
        v = _values(lay, rng)
        ok, L, D, Di, F = _cpu(lay, v)
        assert ok
        Lg, Dg, Dig = np.full(L.size, np.nan), np.zeros(n), np.full(n, np.nan)
        assert so.caspar_gen_eliminate(_ptr(v), _ptr(Lg), _ptr(Dg), _ptr(Dig)) == 1
        assert _same(Lg, L) and _same(Dg, D) and _same(Dig, Di)
        for name, cpu in (("forward", qdldl.ldl_forward), ("backward", qdldl.ldl_backward)):
            t0 = rng.standard_normal(n)
            _slot(F, lay, slots.F_LDL_T)[:] = t0
            cpu(F, lay.FO, lay.Ib, lay.IO)
            t = t0.copy()
            assert getattr(so, f"caspar_gen_{name}")(_ptr(L), _ptr(t)) == 1
            assert _same(t, _slot(F, lay, slots.F_LDL_T)), name


def test_exact_zero_pivot_stops_where_qdldl_stops(built):
    lay, so = built
    n = int(lay.sizes["nkkt"])
    k = n // 2
    v = _values(lay, np.random.default_rng(8), zero_column=k)
    ok, L, D, Di, _ = _cpu(lay, v)
    assert not ok
    Lg, Dg, Dig = np.full(L.size, np.nan), np.zeros(n), np.full(n, np.nan)
    assert so.caspar_gen_eliminate(_ptr(v), _ptr(Lg), _ptr(Dg), _ptr(Dig)) == 0
    assert _same(Lg, L) and _same(Dg, D) and _same(Dig, Di)


def test_stub_answers_minus_one(tmp_path_factory):
    so = host_library(tmp_path_factory, "straight_stub", HOST + straight.STUB)
    a = np.zeros(4)
    assert so.caspar_gen_eliminate(_ptr(a), _ptr(a), _ptr(a), _ptr(a)) == -1
    assert so.caspar_gen_forward(_ptr(a), _ptr(a)) == -1
    assert so.caspar_gen_backward(_ptr(a), _ptr(a)) == -1


def test_pattern_key_and_size_cap():
    lay, other = _layout("ik"), _layout("hs071")
    assert straight.pattern_key(lay) == straight.pattern_key(_layout("ik"))
    assert straight.pattern_key(lay) != straight.pattern_key(other)
    assert 0 < straight.operations(lay) <= straight.MAX_OPERATIONS and straight.fits(lay)
