"""The framework-agnostic core: build expressions, compile, evaluate, solve.

    python examples/core_api.py
"""

import numpy as np

from caspar_backend import Graph, NLPModel, Problem

n = 1000
g = Graph()
x = [g.var(i) for i in range(n)]
obj = g.sum([100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(n - 1)])
cons = [3 * x[i + 1] ** 3 + 2 * x[i + 2] - 5 + g.sin(x[i + 1] - x[i + 2]) * g.sin(x[i + 1] + x[i + 2])
        + 4 * x[i + 1] - x[i] * g.exp(x[i] - x[i + 1]) - 3 for i in range(n - 2)]
model = NLPModel(g, obj, cons, lbx=np.full(n, -5.0), ubx=np.full(n, 5.0),
                 lbg=np.zeros(n - 2), ubg=np.zeros(n - 2), x0=np.full(n, 0.8))
prob = Problem(model)
print(prob, [grp.size for grp in prob.groups])  # one objective group, one constraint group
res = prob.solve(tol=1e-8, print_level=5)
print(res.status, res.f, res.iterations)
