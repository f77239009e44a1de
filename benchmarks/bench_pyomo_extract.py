"""Extraction speed: caspar's Pyomo adapter vs Pyomo's NL writer, in one run.

Writing the ``.nl`` file is the first step of every Pyomo + IPOPT solve, so it
is the bar the adapter has to clear: for each model shape, the same model is
written with the NL writer (``model.write(path, format='nl')``, Pyomo's v2
writer) and extracted with :func:`caspar_backend.adapters.pyomo.pyomo_to_model`
(walk, graph, bounds, NLPModel validation), each the best of ``--repeat``
alternating runs.  The time of building the compiled
``Problem`` (pattern groups and derivative templates, core code) is printed
separately with ``--compile``.

    python benchmarks/bench_pyomo_extract.py            # 200k constraints, all shapes
    python benchmarks/bench_pyomo_extract.py --rows 20000 --shapes chain

Shapes (rows = number of constraints):

* ``chain``     x_i^2 + x_{i+1} y_i - sin(x_i) = c_i, x_i y_i <= 4: a nonlinear
  sparse chain (rows/2 of each);
* ``transport`` sum_j x_ij <= s_i (rows/2), sum_i x_ij >= d_j: purely linear
  LinearExpression rows;
* ``acopf``     polar power flow: named Expressions with products of voltages
  and cos/sin of angle differences, mutable-Param admittances (flow
  limits on 2 rows/3 lines, rows/3 bus balances).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import tempfile
import time


def build_chain(rows):
    import pyomo.environ as pyo

    n = rows // 2
    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(n)
    m.x = pyo.Var(pyo.RangeSet(n + 1), bounds=(-2, 2), initialize=0.5)
    m.y = pyo.Var(m.I, bounds=(0, 3), initialize=1.0)
    m.c = pyo.Param(m.I, initialize=lambda m, i: 0.1 + 1e-6 * i)
    m.eq = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] ** 2 + m.x[i + 1] * m.y[i]
                          - pyo.sin(m.x[i]) == m.c[i])
    m.ineq = pyo.Constraint(m.I, rule=lambda m, i: m.x[i] * m.y[i] <= 4)
    m.obj = pyo.Objective(expr=sum((m.x[i] - 0.3) ** 2 + 0.1 * m.y[i] for i in m.I))
    return m


def build_transport(rows):
    import pyomo.environ as pyo

    ns = rows // 2
    nd = rows - ns
    m = pyo.ConcreteModel()
    m.S = pyo.RangeSet(ns)
    m.D = pyo.RangeSet(nd)
    # each supplier ships to 4 customers, each customer gets 4 suppliers
    arcs = [(i, (i * 7 + k * 13) % nd + 1) for i in range(1, ns + 1) for k in range(4)]
    m.A = pyo.Set(initialize=arcs, dimen=2)
    out, inn = {}, {}
    for i, j in arcs:
        out.setdefault(i, []).append(j)
        inn.setdefault(j, []).append(i)
    m.x = pyo.Var(m.A, bounds=(0, None))
    m.supply = pyo.Constraint(m.S, rule=lambda m, i: sum(m.x[i, j] for j in out[i]) <= 10)
    m.demand = pyo.Constraint(m.D, rule=lambda m, j: sum(m.x[i, j] for i in inn.get(j, ()))
                              >= 1 if j in inn else pyo.Constraint.Skip)
    m.obj = pyo.Objective(expr=sum((1 + (i + j) % 5) * m.x[i, j] for i, j in arcs))
    return m


def build_acopf(rows):
    import pyomo.environ as pyo

    nb = rows // 3
    lines = [(k, k % nb + 1) for k in range(1, nb + 1)] + \
            [(k, (k + 6) % nb + 1) for k in range(1, nb + 1)]
    m = pyo.ConcreteModel()
    m.B = pyo.RangeSet(nb)
    m.L = pyo.Set(initialize=lines, dimen=2)
    m.v = pyo.Var(m.B, bounds=(0.9, 1.1), initialize=1.0)
    m.th = pyo.Var(m.B, bounds=(-0.6, 0.6), initialize=0.0)
    m.pg = pyo.Var(m.B, bounds=(0, 2), initialize=0.5)
    m.g = pyo.Param(m.L, initialize=lambda m, i, j: 1.0 + 0.01 * (i % 10), mutable=True)
    m.b = pyo.Param(m.L, initialize=lambda m, i, j: -8.0 + 0.1 * (j % 10), mutable=True)
    m.pd = pyo.Param(m.B, initialize=lambda m, k: 0.3 + 0.01 * (k % 7))
    m.pf = pyo.Expression(m.L, rule=lambda m, i, j: m.g[i, j] * m.v[i] ** 2 - m.v[i] * m.v[j] * (
        m.g[i, j] * pyo.cos(m.th[i] - m.th[j]) + m.b[i, j] * pyo.sin(m.th[i] - m.th[j])))
    m.lim = pyo.Constraint(m.L, rule=lambda m, i, j: m.pf[i, j] ** 2 <= 4)
    out = {k: [] for k in range(1, nb + 1)}
    for i, j in lines:
        out[i].append((i, j))
    m.bal = pyo.Constraint(m.B, rule=lambda m, k: m.pg[k] - m.pd[k]
                           == sum(m.pf[l] for l in out[k]))
    m.obj = pyo.Objective(expr=sum(m.pg[k] ** 2 + m.pg[k] for k in m.B))
    return m


SHAPES = {"chain": build_chain, "transport": build_transport, "acopf": build_acopf}


def _timed(fn):
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run(shape, rows, compile_problem, repeat):
    """Best of ``repeat`` alternating runs of each (the machine may be shared)."""
    from caspar_backend.adapters.pyomo import pyomo_to_model

    t_build, m = _timed(lambda: SHAPES[shape](rows))
    t_nl = t_cs = float("inf")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.nl")
        for _ in range(repeat):
            t_nl = min(t_nl, _timed(lambda: m.write(path, format="nl"))[0])
            t, nlp = _timed(lambda: pyomo_to_model(m))
            t_cs = min(t_cs, t)
            del nlp
        nlp = pyomo_to_model(m)
    row = dict(shape=shape, m=nlp.m, n=nlp.n, nodes=len(nlp.graph), build=t_build, nl=t_nl,
               caspar=t_cs)
    if compile_problem:
        from caspar_backend.problem import Problem

        t_p, prob = _timed(lambda: Problem(nlp))
        row.update(problem=t_p, groups=len(prob.groups))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=200_000, help="constraints per model")
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--compile", action="store_true", help="also time Problem(...)")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args(argv)
    import pyomo

    print(f"# Pyomo {pyomo.version.version}, Python {platform.python_version()}, "
          f"{platform.machine()}, {os.cpu_count()} CPUs; seconds, best of {args.repeat} "
          "alternating runs")
    head = "| shape | m | n | DAG nodes | build model | NL writer | caspar extract | ratio |"
    if args.compile:
        head += " Problem() | groups |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for shape in args.shapes:
        r = run(shape, args.rows, args.compile, args.repeat)
        line = (f"| {r['shape']} | {r['m']} | {r['n']} | {r['nodes']} | {r['build']:.2f} | "
                f"{r['nl']:.2f} | {r['caspar']:.2f} | {r['caspar'] / r['nl']:.2f} |")
        if args.compile:
            line += f" {r['problem']:.2f} | {r['groups']} |"
        print(line, flush=True)
    print("\nratio = caspar extract / NL writer (below 1: caspar is faster); 'build model' "
          "is Pyomo constructing the model (once)")


if __name__ == "__main__":
    main()
