r"""The constrained chained-Rosenbrock problem of the GPU benchmarks and tests.

.. math::

    \min_{x \in R^{N+2}} \sum_{i=0}^{N-1} 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2

    \text{s.t.}\; c_i(x) = 3 x_{i+1}^3 + 2 x_{i+2} - 5 + \sin(x_{i+1} - x_{i+2})
    \sin(x_{i+1} + x_{i+2}) + 4 x_{i+1} - x_i e^{x_i - x_{i+1}} - 3 p = 0,
    \quad i = 0 \dots N-1,

with the parameter ``p = 1.3`` and ``x0 = 0`` (the chained Rosenbrock function with
trigonometric-exponential constraints of Lukšan & Vlček's test set, "ChainedRosenbrock
+ trig-exp constraints", as in MadNLP's and ExaModels' GPU benchmarks; ``p`` makes the
constant a parameter so a parameter path is exercised).  ``n = N + 2``, ``m = N``.

Three builders of the same mathematics:

* :func:`chain_graph` -- one :class:`caspar_backend.Graph` expression per row (the flat
  input path: N expression trees, grouped by caspar's pattern detection);
* :func:`chain_blocks` -- one :class:`caspar_backend.blocks.TemplateBlock` per family
  (no per-row Python work; the way to reach N = 10^6);
* :func:`chain_casadi` -- an SX problem dict for IPOPT (casadi), the reference.
"""

from __future__ import annotations

import numpy as np

P_VALUE = 1.3


def _model(g, obj, cons, N, m=None, **kw):
    """The NLPModel over n = N + 2 free variables, x0 = 0, p = P_VALUE, with m (default
    N) equality rows = 0."""
    from caspar_backend import NLPModel

    n, m = N + 2, N if m is None else m
    return NLPModel(g, obj, cons, -np.inf * np.ones(n), np.inf * np.ones(n),
                    np.zeros(m), np.zeros(m), x0=np.zeros(n), p=[P_VALUE], **kw)


def chain_graph(N: int, extra_rows: bool = False):
    """The NLPModel built row by row.  ``extra_rows`` appends the N rows
    ``x_i^2 + x_{i+1}`` (a second constraint shape, for evaluator tests; the model is
    then no longer square in its constraints and is not meant to be solved)."""
    from caspar_backend import Graph

    g = Graph()
    x = [g.var(i) for i in range(N + 2)]
    p = g.param(0)
    obj = g.sum([100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(N)])
    cons = [3 * x[i + 1] ** 3 + 2 * x[i + 2] - 5
            + g.sin(x[i + 1] - x[i + 2]) * g.sin(x[i + 1] + x[i + 2])
            + 4 * x[i + 1] - x[i] * g.exp(x[i] - x[i + 1]) - 3 * p for i in range(N)]
    if extra_rows:
        cons += [x[i] * x[i] + x[i + 1] for i in range(N)]
    return _model(g, obj, cons, N, m=len(cons))


def chain_blocks(N: int):
    """The same NLPModel from two templates: the objective term over slots
    (x_i, x_{i+1}) and the constraint over (x_i, x_{i+1}, x_{i+2}, p)."""
    from caspar_backend import Graph
    from caspar_backend.blocks import TemplateBlock

    i = np.arange(N, dtype=np.int64)
    t = Graph()
    a, b = t.var(0), t.var(1)
    term = TemplateBlock(t, 100 * (b - a ** 2) ** 2 + (1 - a) ** 2,
                         np.stack([i, i + 1]), name="chained_rosenbrock")
    c = Graph()
    a, b, d, p = c.var(0), c.var(1), c.var(2), c.param(0)
    row = (3 * b ** 3 + 2 * d - 5 + c.sin(b - d) * c.sin(b + d) + 4 * b
           - a * c.exp(a - b) - 3 * p)
    con = TemplateBlock(c, row, np.stack([i, i + 1, i + 2]), np.zeros((1, N), np.int64),
                        rows=i, name="trig_exp")
    g = Graph()
    return _model(g, g.const(0.0), [], N, constraint_blocks=[con],
                  objective_blocks=[term])


def chain_casadi(N: int):
    """(nlp, args) for ``casadi.nlpsol``: SX, vectorized slices."""
    import casadi as ca

    x = ca.SX.sym("x", N + 2)
    p = ca.SX.sym("p")
    a, b, c = x[:N], x[1:N + 1], x[2:N + 2]
    f = ca.sum1(100 * (b - a ** 2) ** 2 + (1 - a) ** 2)
    g = 3 * b ** 3 + 2 * c - 5 + ca.sin(b - c) * ca.sin(b + c) + 4 * b - a * ca.exp(a - b) \
        - 3 * p
    args = dict(x0=np.zeros(N + 2), lbg=np.zeros(N), ubg=np.zeros(N), p=[P_VALUE])
    return {"x": x, "p": p, "f": f, "g": g}, args
