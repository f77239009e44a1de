"""Concurrent solves of one compiled problem.

Eight threads solve one :class:`~caspar_backend.Problem` at once, each with its own
parameter value p in (p - x0)^2 + 100 (x1 - x0^2)^2 (minimum at x = (p, p^2)), released
together by a barrier; every answer must equal that p's sequential solve bit for bit
(status, iterations, repr of f and x).  ``CASPAR_THREAD_REPEATS`` sets the number of
rounds (default 10; the acceptance run used 100), on the general and the compiled path.
"""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from caspar_backend import Graph, NLPModel, Problem

PS = [1.0 + 0.5 * k for k in range(8)]
REPEATS = int(os.environ.get("CASPAR_THREAD_REPEATS", "10"))


def _rosenbrock_p(x0=(-1.2, 1.0)):
    g = Graph()
    x, p = [g.var(0), g.var(1)], g.param(0)
    obj = (p - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    inf = np.full(2, np.inf)
    return Problem(NLPModel(g, obj, [], -inf, inf, np.zeros(0), np.zeros(0),
                            x0=np.array(x0), p=np.array([1.0])))


def _key(r):
    return r.status, r.iterations, repr(r.f), r.x.tobytes()


def _concurrently(fn, args, timeout=120.0):
    """fn(a) for every a in its own thread, all released together; the results by a."""
    out, errors = {}, []
    barrier = threading.Barrier(len(args))

    def run(a):
        try:
            barrier.wait()
            out[a] = fn(a)
        except BaseException as exc:   # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(a,), daemon=True) for a in args]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a concurrent solve hangs"
    assert not errors, errors
    return out


@pytest.mark.parametrize("path", ["no", "yes"])
def test_concurrent_solves_equal_sequential_ones(path):
    """On both paths: the general interior point ('no') and the compiled kernel
    ('yes'; 'auto' takes it for this size once the kernels are loaded)."""
    pr = _rosenbrock_p()
    opts = dict(print_level=0, compiled_path=path)
    runs = {q: pr.solve(p=[q], **opts) for q in PS}
    seq = {q: _key(r) for q, r in runs.items()}
    for q in PS:
        assert seq[q][0] == "Solve_Succeeded"
        assert runs[q].extra.get("path") == ("compiled" if path == "yes" else None)
    for _ in range(REPEATS):
        got = _concurrently(lambda q: _key(pr.solve(p=[q], **opts)), PS)
        for q in PS:
            assert got[q] == seq[q], q


def test_solution_follows_p_and_current_p_is_stored():
    pr = _rosenbrock_p()
    r = pr.solve(p=[2.0], print_level=0)
    assert r.status == "Solve_Succeeded"
    np.testing.assert_allclose(r.x, [2.0, 4.0], rtol=1e-6)
    np.testing.assert_array_equal(pr.p, [2.0])       # solve(p=...) sets the current p
    r2 = pr.solve(print_level=0)
    assert _key(r2) == _key(r)


def test_bound_evaluators_are_independent():
    pr = _rosenbrock_p()
    x = np.array([0.3, -0.7])
    a, b = pr.evaluator("cpu", p=[1.0]), pr.evaluator("cpu", p=[3.0])
    assert a is not b and a is not pr.evaluator("cpu")
    ga, gb = a.grad(x), b.grad(x)
    assert a.obj(x) == (1.0 - 0.3) ** 2 + 100 * (-0.7 - 0.09) ** 2
    assert b.obj(x) == (3.0 - 0.3) ** 2 + 100 * (-0.7 - 0.09) ** 2
    np.testing.assert_array_equal(a.grad(x), ga)   # b's evaluations leave a alone
    assert not np.array_equal(ga, gb)
    np.testing.assert_array_equal(a.parameters(), [1.0])
    # the shared evaluator keeps following the problem's current p
    pr.p = [3.0]
    np.testing.assert_array_equal(pr.evaluator("cpu").grad(x), gb)


def test_concurrent_parameter_derivatives():
    pr = _rosenbrock_p()
    x, lam = np.array([0.5, 0.5]), np.zeros(0)
    seq = {q: pr.parameter_derivatives(x, lam, p=[q])["grad_p"].tobytes() for q in PS}
    got = _concurrently(lambda q: pr.parameter_derivatives(x, lam, p=[q])["grad_p"].tobytes(),
                        PS)
    assert got == seq


def test_option_device_keeps_the_solves_p():
    """solve_nlp's device option re-targets the evaluator; the solve's p goes with it."""
    from caspar_backend.solver import solve_nlp

    pr = _rosenbrock_p()
    device = "cpu"
    ev = pr.evaluator(device, p=[2.5])
    inf = np.full(2, np.inf)
    r = solve_nlp(ev, -inf, inf, [], [], pr.x0, options=dict(print_level=0, device=device))
    np.testing.assert_allclose(r.x, [2.5, 6.25], rtol=1e-6)


@pytest.mark.gpu
def test_concurrent_device_solves_equal_sequential_ones():
    """The same on the GPU: each solve's bound CUDA evaluator has its own parameter
    vector and buffers over the shared compiled kernels."""
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)
    pr = _rosenbrock_p()
    seq = {q: _key(pr.solve(p=[q], print_level=0, device="cuda")) for q in PS}
    for _ in range(3):
        got = _concurrently(lambda q: _key(pr.solve(p=[q], print_level=0, device="cuda")), PS)
        assert got == seq
