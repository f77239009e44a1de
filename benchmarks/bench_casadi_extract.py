"""Extraction time of the CasADi adapter on a large mapped (MX) problem and an
SX problem of the same size.

The model is a direct multiple-shooting optimal-control NLP: a 2-state
dynamics step ``F(x, u, h)`` (one RK2 step of a pendulum, about 20 SX
instructions) over N intervals,

    min  sum u_k^2 + sum |x_k|^2   s.t.  F(x_k, u_k, h) - x_{k+1} = 0,   k < N

written three ways:

* ``MX map``           ``F.map(N)`` in an MX graph: the adapter compiles F once and
                       hands the N instances over as a TemplateBlock (default);
* ``MX map, replay``   the same with ``blocks=False``: F replayed N times, one
                       expression per instance;
* ``MX map, expanded`` the same graph with ``keep_calls=False``: casadi's
                       ``expand()`` makes N copies, the adapter walks them all;
* ``SX``               the same NLP built in SX (N expanded copies from the start).

For each: casadi instruction count, adapter extraction time
(``casadi_to_model``: read + build the DAG + NLPModel validation), and the time
of ``Problem(model)`` (pattern grouping, derivative templates) for context.

    /work/venv/bin/python benchmarks/bench_casadi_extract.py [N]   (default 100000)
"""

from __future__ import annotations

import sys
import time

import casadi as ca

from caspar_backend.adapters.casadi import casadi_to_model
from caspar_backend.problem import Problem


def dynamics():
    xs = ca.SX.sym("xs", 2)
    u = ca.SX.sym("u")
    h = ca.SX.sym("h")
    k1 = ca.vertcat(xs[1], -ca.sin(xs[0]) + u)
    k2 = ca.vertcat(xs[1] + h / 2 * k1[1], -ca.sin(xs[0] + h / 2 * k1[0]) + u)
    return ca.Function("F", [xs, u, h], [xs + h * k2])


def mx_problem(N):
    F = dynamics()
    X = ca.MX.sym("X", 2, N + 1)
    U = ca.MX.sym("U", 1, N)
    h = ca.MX.sym("h")
    g = ca.vec(F.map(N)(X[:, :-1], U, ca.repmat(h, 1, N)) - X[:, 1:])
    f = ca.sumsqr(U) + ca.sumsqr(X)
    return {"x": ca.veccat(X, U), "f": f, "g": g, "p": h}


def sx_problem(N):
    F = dynamics()
    X = ca.SX.sym("X", 2, N + 1)
    U = ca.SX.sym("U", 1, N)
    h = ca.SX.sym("h")
    g = ca.vec(F.map(N)(X[:, :-1], U, ca.repmat(h, 1, N)) - X[:, 1:])
    f = ca.sumsqr(U) + ca.sumsqr(X)
    return {"x": ca.veccat(X, U), "f": f, "g": g, "p": h}


def n_instructions(nlp):
    fn = ca.Function("nlp", [nlp["x"], nlp["p"]], [nlp["f"], nlp["g"]])
    return fn.n_instructions(), (fn.expand().n_instructions() if fn.is_a("MXFunction")
                                 else fn.n_instructions())


def run(label, nlp, **kw):
    n_top, n_sx = n_instructions(nlp)
    t0 = time.perf_counter()
    model = casadi_to_model(nlp, p=0.1, **kw)
    t1 = time.perf_counter()
    prob = Problem(model)
    t2 = time.perf_counter()
    print(f"{label:<20} {n_top:>10} {n_sx:>12} {model.n:>9} {model.m:>9} "
          f"{t1 - t0:>10.2f} {t2 - t1:>10.2f} {len(prob.groups):>7}")
    return t1 - t0


def main(N=100_000):
    print(f"N = {N} shooting intervals")
    print(f"{'problem':<20} {'casadi ins':>10} {'expanded ins':>12} {'n':>9} {'m':>9} "
          f"{'extract s':>10} {'Problem s':>10} {'groups':>7}")
    t0 = time.perf_counter()
    mx = mx_problem(N)
    print(f"  (building the MX graph: {time.perf_counter() - t0:.2f} s)")
    run("MX map", mx)
    run("MX map, replay", mx, blocks=False)
    run("MX map, expanded", mx, keep_calls=False)
    t0 = time.perf_counter()
    sx = sx_problem(N)
    print(f"  (building the SX graph: {time.perf_counter() - t0:.2f} s)")
    run("SX", sx)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
