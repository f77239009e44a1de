"""Problems the batch tests evaluate: each a ``(Problem, sample)`` pair where
``sample(rng, B)`` gives B points X (B, n) and parameter rows P (B, n_params) inside the
problem's domain."""

from __future__ import annotations

import numpy as np

from caspar_backend import Graph, NLPModel, Problem

#: bank problems: with and without constraints, a single objective term and many
#: (chained Rosenbrock), fixed variables, duplicate constraints, a log barrier domain
BANK_NAMES = ["hs001", "hs006", "hs007", "hs014", "hs021", "hs035", "hs038", "hs065",
              "hs071", "hs076", "chained_rosenbrock_10", "fixed_variables",
              "degenerate_duplicate_constraints", "undefined_outside_log_barrier",
              "optimal_control_200"]

#: casadi corpus cases: parameters (sx_params, mx_basic), Function.map blocks with a
#: parameter (mx_map, mx_chained_maps), a reduced map, no objective (sx_feasibility)
CORPUS_NAMES = ["sx_params", "mx_basic", "mx_map", "mx_chained_maps", "mx_map_reduce",
                "mx_thread_map", "sx_feasibility", "sx_printme_sparse_g"]

OTHER_NAMES = ["ik", "wide", "constant_objective", "pyomo_params"]


def _uniform_sample(lo, hi, n_params, plo=0.5, phi=1.5):
    def sample(rng, B):
        X = rng.uniform(lo, hi, (B, len(lo)))
        return X, rng.uniform(plo, phi, (B, n_params))
    return sample


def bank(name):
    from caspar_backend import from_casadi
    from tests.support.problem_bank import BANK

    d = next(b for b in BANK if b.name == name).build()
    nlp = {"x": d["x"], "f": d["f"]}
    if d["g"] is not None:
        nlp["g"] = d["g"]
    prob = from_casadi(nlp, x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"],
                       ubg=d["ubg"])
    x0 = np.asarray(d["x0"], float)
    # around the standard start, on its side of 0 (log/sqrt domains)
    lo, hi = x0 - 0.3 * np.abs(x0) - 0.1, x0 + 0.3 * np.abs(x0) + 0.1
    lo = np.where(x0 > 0, np.maximum(lo, 0.5 * x0), lo)
    return prob, _uniform_sample(lo, hi, 0)


def corpus(name):
    from caspar_backend import from_casadi
    from tests.support.casadi_corpus import build

    case = build(name)
    prob = from_casadi(case.nlp, **case.kw)

    def sample(rng, B):
        pts = [case.sample(rng) for _ in range(B)]
        return (np.array([x for x, _ in pts]).reshape(B, prob.n),
                np.array([p for _, p in pts]).reshape(B, prob.n_params))
    return prob, sample


def ik():
    from caspar_backend import from_casadi
    from benchmarks.bench_small import ik_problem

    nlp, bounds = ik_problem()
    prob = from_casadi(nlp, **bounds, p=[1.0, 0.5])
    return prob, _uniform_sample(-np.pi * np.ones(3), np.pi * np.ones(3), 2, -2.0, 2.0)


def wide(N=40):
    """Wide rows split into terms (summed through the term buffer), with repeated
    variables: the raw Jacobian has duplicate pairs (jac_map), the objective many
    terms."""
    g = Graph()
    x = [g.var(i) for i in range(N)]
    p = [g.param(0), g.param(1)]
    cons = [g.lincomb(list(np.linspace(1, 2, N)), x), g.sum([xi * xi for xi in x]),
            g.sum([x[0] * x[i] for i in range(1, 12)] + [g.exp(x[0]) * p[0]]), x[3] * x[4],
            g.sum([g.sin(x[i]) * x[i + 1] * p[1] for i in range(20)])]
    m = len(cons)
    model = NLPModel(g, g.sum([g.sin(xi) * p[0] for xi in x] + [x[0] * x[1]]), cons,
                     -np.ones(N), np.ones(N), np.zeros(m), np.zeros(m), p=[1.0, 2.0])
    return Problem(model), _uniform_sample(-np.ones(N), np.ones(N), 2)


def constant_objective():
    """A constant objective (one constant term: no gradient, no Hessian entries)."""
    g = Graph()
    x = [g.var(i) for i in range(3)]
    cons = [x[0] * x[1] - x[2], g.exp(x[2]) + x[0]]
    model = NLPModel(g, g.const(2.5), cons, -np.ones(3), np.ones(3), np.zeros(2),
                     np.zeros(2))
    return Problem(model), _uniform_sample(-np.ones(3), np.ones(3), 0)


def pyomo_params():
    """A Pyomo model with indexed mutable Params in objective and constraints."""
    import pyomo.environ as pyo

    from caspar_backend import from_pyomo

    m = pyo.ConcreteModel()
    m.I = pyo.RangeSet(5)
    m.x = pyo.Var(m.I, bounds=(-2, 2), initialize=0.5)
    m.q = pyo.Param(m.I, initialize=lambda m, i: 1.0 + i, mutable=True)
    m.c = pyo.Param(initialize=2.0, mutable=True)
    m.row = pyo.Constraint(m.I, rule=lambda m, i: m.q[i] * m.x[i] ** 2 + pyo.sin(m.x[i]) <= m.c)
    m.tot = pyo.Constraint(expr=sum(m.x[i] * m.q[i] for i in m.I) == m.c)
    m.obj = pyo.Objective(expr=sum(m.q[i] * (m.x[i] - 0.1 * i) ** 4 for i in m.I)
                          + m.x[1] * m.x[2])
    prob = from_pyomo(m)
    return prob, _uniform_sample(-np.ones(5), np.ones(5), prob.n_params)


def build(name):
    """``(Problem, sample)`` for a name of BANK_NAMES, CORPUS_NAMES or OTHER_NAMES."""
    if name in BANK_NAMES:
        return bank(name)
    if name in CORPUS_NAMES:
        return corpus(name)
    return globals()[name]()


ALL_NAMES = BANK_NAMES + CORPUS_NAMES + OTHER_NAMES


def perturbed_bank(name, starts, seed=0):
    """Bank problem ``name`` with ``starts`` starting points: the standard one, then
    perturbations ``x0 + 0.05 (1 + |x0|) N(0, 1)``.  Returns ``(Problem, inputs,
    options)``, ``inputs`` the ``solve_batch`` keywords (X0 (starts, n) and the bounds),
    ``options`` the bank's options with ``print_level=0``."""
    from caspar_backend import from_casadi
    from tests.support.problem_bank import BANK
    from tests.support.solver_harness import _nlp

    bp = next(b for b in BANK if b.name == name)
    d = bp.build()
    x0 = np.asarray(d["x0"], float)
    rng = np.random.default_rng(seed)
    X0 = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                          for _ in range(starts - 1)])
    inputs = dict(x0=X0, **{k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")})
    return from_casadi(_nlp(d)), inputs, dict(bp.options, print_level=0)
