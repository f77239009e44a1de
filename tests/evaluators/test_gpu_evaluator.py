"""CUDA evaluator against the NumPy evaluator (differential), and the NVRTC cache.

GPU tests: marked ``gpu``; they skip cleanly without CuPy or a CUDA device.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from caspar_backend import Graph, NLPModel, Problem
from tests.support.assertions import close
from tests.support.exprgen import ALL_OPS, ExprGen

pytestmark = pytest.mark.gpu

# the CUDA evaluator against the NumPy one: the same formulas, rounding apart
RTOL = 1e-12


def _random_model(seed=0, n=12, per_op=6, n_params=3):
    rng = np.random.default_rng(seed)
    g = Graph()
    gen = ExprGen(g, rng, range(n), range(n_params))
    roots = [gen.expr_with(3, op) for op in ALL_OPS if op not in ("var",) for _ in range(per_op)]
    obj = g.sum(roots[:10])
    m = len(roots)
    model = NLPModel(g, obj, roots, lbx=-np.inf * np.ones(n), ubx=np.inf * np.ones(n),
                     lbg=-np.inf * np.ones(m), ubg=np.inf * np.ones(m),
                     p=rng.uniform(0.5, 1.5, n_params))
    return Problem(model), rng


def _chain_model(N=20000):
    from benchmarks.models.chain import chain_graph

    return Problem(chain_graph(N, extra_rows=True))


def _wide_model(N=5000):
    """Wide rows (split into terms, summed into the row) with repeated variables, so
    the raw Jacobian has duplicate (row, col) pairs that must be summed."""
    g = Graph()
    x = [g.var(i) for i in range(N)]
    cons = [g.lincomb(list(np.linspace(1, 2, N)), x), g.sum([xi * xi for xi in x]),
            g.sum([x[0] * x[i] for i in range(1, 12)] + [g.exp(x[0])]), x[3] * x[4]]
    m = len(cons)
    return Problem(NLPModel(g, g.sum([g.sin(xi) for xi in x]), cons, -np.ones(N), np.ones(N),
                            np.zeros(m), np.zeros(m)))


@pytest.mark.parametrize("build", ["random", "chain", "wide"])
def test_cuda_matches_numpy(build):
    import cupy as cp

    if build == "random":
        prob, rng = _random_model()
    else:
        prob = _chain_model() if build == "chain" else _wide_model()
        rng = np.random.default_rng(1)
    cpu, gpu = prob.evaluator("cpu"), prob.evaluator("cuda")
    assert gpu.xp is cp
    np.testing.assert_array_equal(cp.asnumpy(gpu.jac_rows), cpu.jac_rows)
    np.testing.assert_array_equal(cp.asnumpy(gpu.hess_cols), cpu.hess_cols)
    for _ in range(3):
        x = rng.uniform(-1.5, 1.5, prob.n)
        lam = rng.standard_normal(prob.m)
        xd, ld = cp.asarray(x), cp.asarray(lam)
        close(gpu.obj(xd), cpu.obj(x), RTOL)
        close(cp.asnumpy(gpu.grad(xd)), cpu.grad(x), RTOL)
        close(cp.asnumpy(gpu.cons(xd)), cpu.cons(x), RTOL)
        close(cp.asnumpy(gpu.jac_values(xd)), cpu.jac_values(x), RTOL)
        close(cp.asnumpy(gpu.hess_values(xd, ld, 0.7)), cpu.hess_values(x, lam, 0.7), RTOL)


def test_outputs_written_in_place_without_allocation():
    import cupy as cp

    prob = _chain_model(1000)
    ev = prob.evaluator("cuda")
    x = cp.asarray(np.random.default_rng(0).uniform(-1, 1, prob.n))
    out = cp.empty(ev.nnz_jac)
    assert ev.jac_values(x, out) is out
    lam = cp.ones(prob.m)
    h = cp.empty(ev.nnz_hess)
    assert ev.hess_values(x, lam, 1.0, h) is h


def test_parameters_change_without_recompiling():
    import cupy as cp

    prob = _chain_model(100)
    ev = prob.evaluator("cuda")
    x = np.random.default_rng(0).uniform(-1, 1, prob.n)
    c1 = cp.asnumpy(ev.cons(cp.asarray(x), p=[1.0]))
    c2 = cp.asnumpy(ev.cons(cp.asarray(x), p=[2.0]))
    np.testing.assert_allclose(c1[:100] - c2[:100], 3.0, rtol=1e-12)


def test_second_process_reuses_compile_cache(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from caspar_backend import Graph, NLPModel, Problem
        g = Graph(); x = [g.var(i) for i in range(3)]
        m = NLPModel(g, g.sum([g.exp(x[i]) * x[i + 1] for i in range(2)]), [g.atan2(x[0], x[2])],
                     lbx=[-1] * 3, ubx=[1] * 3, lbg=[0], ubg=[0])
        print(Problem(m).evaluator('cuda').compiled_from_cache)
    """)
    env = {**__import__("os").environ, "CASPAR_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert first.stdout.strip() == "False", first.stderr
    assert second.stdout.strip() == "True", second.stderr
    assert list(tmp_path.glob("cuda/*.cu")) and list(tmp_path.glob("cuda/*.cubin"))


def test_nvrtc_failure_carries_source_and_log():
    from caspar_backend.cuda_compile import CudaCompileError, compile_module

    bad = 'extern "C" __global__ void k(double* o) { o[0] = undefined_name; }\n'
    with pytest.raises(CudaCompileError) as e:
        compile_module(bad, "bad.cu")
    assert e.value.source == bad
    assert "undefined_name" in e.value.log


# ------------------------------------------------- the adapter test corpora
def _corpus_problems():
    """(id, Problem builder, sampler) of every case of both adapter corpora that the
    installed frameworks allow."""
    out = []
    try:
        from tests.support.casadi_corpus import CASES, build

        from caspar_backend import from_casadi

        for name in sorted(CASES):
            def make(name=name):
                case = build(name)
                return from_casadi(case.nlp, **case.kw), case.sample
            out.append(pytest.param(make, id=f"casadi-{name}"))
    except ImportError:
        pass
    try:
        from tests.support.pyomo_corpus import CORPUS

        from caspar_backend.adapters.pyomo import from_pyomo

        for name in sorted(CORPUS):
            def make(name=name):
                prob = from_pyomo(CORPUS[name]())
                return prob, lambda rng: (rng.uniform(0.2, 1.8, prob.n), prob.p)
            out.append(pytest.param(make, id=f"pyomo-{name}"))
    except ImportError:
        pass
    return out


@pytest.mark.parametrize("make", _corpus_problems())
def test_cuda_matches_numpy_on_adapter_corpora(make):
    """The CUDA evaluator equals the NumPy one to 1e-12 relative on the
    CasADi and Pyomo adapter corpora (values, gradient, Jacobian, Hessian)."""
    import cupy as cp

    prob, sample = make()
    cpu, gpu = prob.evaluator("cpu"), prob.evaluator("cuda")
    rng = np.random.default_rng(7)
    for _ in range(3):
        x, p = sample(rng)
        x = np.asarray(x, dtype=float)
        p = None if p is None or np.size(p) == 0 else np.asarray(p, dtype=float)
        lam = rng.uniform(-2.0, 2.0, prob.m)
        xd, ld = cp.asarray(x), cp.asarray(lam)
        pd = None if p is None else cp.asarray(p)
        close(gpu.obj(xd, p=pd), cpu.obj(x, p=p), RTOL)
        close(cp.asnumpy(gpu.grad(xd, p=pd)), cpu.grad(x, p=p), RTOL)
        close(cp.asnumpy(gpu.cons(xd, p=pd)), cpu.cons(x, p=p), RTOL)
        close(cp.asnumpy(gpu.jac_values(xd, p=pd)), cpu.jac_values(x, p=p), RTOL)
        close(cp.asnumpy(gpu.hess_values(xd, ld, 0.7, p=pd)),
               cpu.hess_values(x, lam, 0.7, p=p), RTOL)
