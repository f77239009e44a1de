"""The CUDA build's batched loads (caspar_backend/compiled/cuda/batched_loads.py): which
loops the rewrite takes and leaves, that a rewritten loop computes the same bits, that
the simulated CUDA kernel with the rewrite gives what it gives without, and (slow) that
the CPU kernels rebuilt from the rewritten source equal the CPU kernels on the bank."""
import ast
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from caspar_backend.compiled.cuda.batched_loads import batch_loads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SOURCE = '''
def f(a, b, c, idx, n, alpha):
    s = 0.0
    for i in range(n):                 # elementwise, a carried sum: rewritten
        v = b[i] * alpha
        a[i] += v + c[idx[i]]
        s += v
    for i in range(n):                 # a scatter: rewritten, its four targets tested
        k = idx[i]
        a[k] += b[i] * alpha
        s = s + c[k]
    for i in range(n):                 # a scatter whose index a later line changes: left
        k = idx[i]
        a[k] += b[i]
        k = idx[i] + 1
    for i in range(n):                 # a load under a condition: left
        a[i] = b[i] if i < 3 else c[i]
    t = 0.0
    for i in range(n):                 # a carried scalar stored: left
        t = t + b[i]
        c[i] = t
    for i in range(n):                 # a call that is not pure: left
        a[i] = g(b[i])
    for i in range(n):                 # an array loaded after its store: left
        a[i] = b[i]
        a[i] += c[i]
    for i in range(n):                 # stores only: left
        b[i] = 0.0
    return s, v, k, i
'''


def _compile(tree):
    ast.fix_missing_locations(tree)
    ns = {"g": lambda v: v * 2.0}
    exec(compile(tree, "<test>", "exec"), ns)
    return ns["f"]


@pytest.mark.parametrize("n", (0, 1, 3, 4, 7, 13))
def test_rewrite_takes_elementwise_loops_only_and_keeps_the_bits(n):
    tree = ast.parse(textwrap.dedent(SOURCE))
    orig = _compile(ast.parse(textwrap.dedent(SOURCE)))
    assert batch_loads(tree.body[0]) == 2
    new = _compile(tree)
    rng = np.random.default_rng(n)
    args = [rng.standard_normal(17) for _ in range(3)]
    # repeated targets (the group done in order) and a permutation (four at once)
    idx = rng.integers(0, 16, 16) if n % 2 else rng.permutation(16)
    out = []
    for fn in (orig, new):
        a, b, c = (x.copy() for x in args)
        try:
            r = fn(a, b, c, idx, n, 0.3)
        except UnboundLocalError:      # n = 0: the loops' names never bound, both ways
            r = None
        out.append((r, a, b, c))
    assert repr(out[0][0]) == repr(out[1][0])
    for x, y in zip(out[0][1:], out[1][1:]):
        np.testing.assert_array_equal(x, y)


def test_unsigned_loops_keep_unsigned_counters():
    src = "def f(a, b, n):\n    for i in range(U(0), U(n)):\n        a[i] = b[i]\n"
    tree = ast.parse(src)
    assert batch_loads(tree.body[0]) == 1
    text = ast.unparse(tree)
    assert "_bl0_i + U(4) <= _bl0_e" in text and "range(U(_bl0_i), U(_bl0_e))" in text
    mixed = ast.parse("def f(a, b, m, n):\n    for i in range(m, U(n)):\n        a[i] = b[i]\n")
    assert batch_loads(mixed.body[0]) == 0


def _simulated(batched: bool) -> list:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=ROOT,
               CASPAR_CUDA_BATCHED_LOADS="1" if batched else "0")
    out = subprocess.run([sys.executable, "-m", "tests.support.cuda_simulated"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return [json.loads(s) for s in out.stdout.splitlines() if s.startswith("{")]


def test_simulated_kernel_with_batched_loads_equals_it_without():
    pytest.importorskip("numba_cuda")
    pytest.importorskip("casadi")
    with_, without = _simulated(True), _simulated(False)
    assert len(with_) == len(without) > 0
    assert with_ == without             # every case, both arrangements, bit for bit


def test_the_kernels_take_the_rewrite(monkeypatch):
    from caspar_backend.compiled.cuda.loops import while_code
    from caspar_backend.compiled.kernels.kkt import kkt_build, kkt_matvec

    monkeypatch.setenv("CASPAR_CUDA_BATCHED_LOADS", "1")
    assert any(v.startswith("_bl") for v in while_code(kkt_build.py_func).co_varnames)
    assert any(v.startswith("_bl") for v in while_code(kkt_matvec.py_func).co_varnames)
    monkeypatch.setenv("CASPAR_CUDA_BATCHED_LOADS", "0")
    assert not any(v.startswith("_bl") for v in while_code(kkt_build.py_func).co_varnames)


@pytest.mark.slow
def test_rewritten_cpu_kernels_equal_the_kernels_on_the_bank(monkeypatch):
    pytest.importorskip("casadi")
    monkeypatch.setenv("CASPAR_CUDA_BATCHED_LOADS", "1")
    from caspar_backend import from_casadi
    from caspar_backend.batch.inputs import batch_inputs
    from caspar_backend.compiled.cuda.group import kernel_reason
    from tests.support.problem_bank import bank
    from tests.support.solver_harness import _nlp
    from tests.support.transformed_kernels import solve_both, transformed_solve_rows

    solve_t = transformed_solve_rows()
    checked = 0
    for bp in bank(include_slow=False):
        d = bp.build()
        problem = from_casadi(_nlp(d))
        x0 = np.asarray(d["x0"], float)
        rng = np.random.default_rng(3)
        X = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                             for _ in range(2)])
        sub = batch_inputs(problem, None, x0=X, **{k: d[k] for k in ("lbx", "ubx", "lbg",
                                                                      "ubg")})
        sub = sub.subset(np.arange(sub.size))
        if kernel_reason(problem, dict(bp.options), sub, cuda=False):
            continue
        a, b = solve_both(problem, sub, dict(bp.options), solve_t)
        for x, y in zip(a[:3], b[:3]):
            np.testing.assert_array_equal(x, y, err_msg=bp.name)
        assert np.array_equal(a[3].view(np.int64), b[3].view(np.int64)), bp.name
        checked += 1
    assert checked >= 60


def test_the_rewrite_has_its_own_kernel_cache_entry(monkeypatch):
    from caspar_backend.compiled.cuda.cache import _stamp

    monkeypatch.setenv("CASPAR_CUDA_BATCHED_LOADS", "0")
    off = _stamp()
    monkeypatch.setenv("CASPAR_CUDA_BATCHED_LOADS", "1")
    assert _stamp() != off
