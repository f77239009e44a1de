"""Seeded random expressions over a :class:`caspar_backend.expr.Graph`, test points
strictly inside their domains, a CasADi SX translator, and finite differences.

Used by the randomized derivative tests.  Nothing here calls caspar's derivative
code: the references are the ops' pure-Python ``fold`` rules, central finite
differences, and CasADi's own AD of the translated expression.

Domains
    Every op is built by a builder in :data:`OP_BUILDERS` (a test checks that the
    table covers :data:`caspar_backend.ops.OPS` exactly).  Builders wrap arguments in
    domain-safe transforms, so expressions are finite on the whole sampling box:
    ``log(c + u**2)``, ``sqrt(2 + tanh(u))``, ``asin(0.9*tanh(u))``,
    ``acosh(1 + positive)``, ``tan(1.2*tanh(u))``, ``x / (+-positive)``,
    ``positive ** real``, ``atan2(u, positive)``, ``hypot(u, nonzero)``, ...
    :func:`point_ok` re-checks every node's value at a sampled point anyway.

Kinks (non-smooth ops)
    abs, sign, floor, ceil, fmin, fmax, comparisons (and through them and/or/not and
    if_else) are differentiable except on a kink set.  Finite-difference checks
    are only meaningful away from it, so :func:`point_ok` rejects points where
    a kink is closer than ``kink_margin`` in the op's argument, *and* points where
    the discrete outcome of any non-smooth node (comparison values, floor/ceil
    values, signs, which side of fmin/fmax is taken, the if_else branch) changes
    within ``radius`` of the point along any coordinate.  Tests pass a radius at
    least twice their finite-difference step, so every FD stencil point sits on
    the same smooth piece.

Everything is deterministic given the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import math

import numpy as np

from caspar_backend import ops as _ops
from caspar_backend.expr import Graph, Node, evaluate, topo_order

ALL_OPS = tuple(_ops.OPS)
COMPARISONS = ("lt", "le", "eq", "ne", "ge", "gt")
NONSMOOTH = tuple(k for k, v in _ops.OPS.items() if not v.smooth)

#: powi exponents the generator uses (negative ones get a base away from 0)
POWI_EXPONENTS = (2, 3, 4, 5, -1, -2, -3)
#: real (non-integer, not 0.5) exponents for pow
REAL_EXPONENTS = (1.5, 2.5, -0.5, -1.5, 0.3, 1.0 / 3.0, 0.75, 1.7)


# --------------------------------------------------------------------------
# the generator
# --------------------------------------------------------------------------
class ExprGen:
    """Random expressions over ``var_pool`` (variable indices) and ``param_pool``.

    ``expr(depth, root_op=None)`` returns a random node; with ``root_op`` the
    outermost operation is that op (before simplification; use
    :meth:`expr_with` to insist it survives).  Values stay moderate on the
    box ``x in [-1.5, 1.5]``, ``p in [0.5, 1.5]``.
    """

    def __init__(self, g: Graph, rng: np.random.Generator, var_pool, param_pool=()):
        self.g = g
        self.rng = rng
        self.vars = list(var_pool)
        self.params = list(param_pool)

    # -- helpers -------------------------------------------------------------
    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def c(self, lo=-2.0, hi=2.0):
        """A random constant, rounded (so printing stays short), never 0 or +-1."""
        while True:
            v = round(float(self.rng.uniform(lo, hi)), 3)
            if v not in (0.0, 1.0, -1.0):
                return self.g.const(v)

    def leaf(self) -> Node:
        g, r = self.g, self.rng.random()
        if r < 0.45 or (r >= 0.6 and not self.params):
            return g.var(self.choice(self.vars))
        if r < 0.6:         # two variables, so expressions couple their variables
            a, b = g.var(self.choice(self.vars)), g.var(self.choice(self.vars))
            return g.apply(self.choice(("add", "sub", "mul")), a, b)
        if r < 0.75:
            return g.param(self.choice(self.params))
        if r < 0.85:
            return g.mul(self.c(), g.var(self.choice(self.vars)))
        return g.mul(g.param(self.choice(self.params)), g.var(self.choice(self.vars)))

    def any(self, depth: int) -> Node:
        """Any expression (moderate magnitude)."""
        if depth <= 0 or self.rng.random() < 0.2:
            return self.leaf()
        op = self.choice(_RANDOM_OPS)
        return OP_BUILDERS[op](self, depth - 1)

    def bounded(self, depth: int) -> Node:
        """|value| <= ~1.5 everywhere."""
        g, u = self.g, self.any(depth)
        k = int(self.rng.integers(5))
        if k == 0:
            return g.mul(self.c(0.6, 1.4), g.tanh(u))
        if k == 1:
            return g.sin(u)
        if k == 2:
            return g.atan(u)
        if k == 3:
            return g.div(u, g.add(g.const(1.0), g.powi(u, 2)))
        return g.var(self.choice(self.vars))

    def positive(self, depth: int) -> Node:
        """value >= 0.5 everywhere."""
        g, u = self.g, self.any(depth)
        k = int(self.rng.integers(7))
        if k == 0:
            return g.add(self.c(0.5, 2.0), g.powi(u, 2))
        if k == 1:
            return g.add(self.c(1.6, 3.0), g.tanh(u))
        if k == 2:
            return g.cosh(self.bounded(depth))
        if k == 3:
            return g.hypot(u, self.c(0.5, 1.5))
        if k == 4:
            return g.add(self.c(0.2, 1.0), g.exp(self.bounded(depth)))
        if k == 5 and self.params:
            return g.add(g.param(self.choice(self.params)), g.powi(u, 2))
        return g.add(self.c(0.5, 1.5), g.abs(u))

    def unit(self, depth: int) -> Node:
        """|value| <= 0.9 everywhere."""
        g, u = self.g, self.any(depth)
        k = int(self.rng.integers(4))
        if k == 0:
            return g.mul(g.const(0.9), g.tanh(u))
        if k == 1:
            return g.mul(g.const(0.9), g.sin(u))
        if k == 2:
            return g.mul(g.const(0.85), g.erf(u))
        return g.div(g.mul(g.const(0.9), u), g.hypot(u, g.const(1.0)))

    def nonzero(self, depth: int) -> Node:
        """|value| >= 0.5 everywhere."""
        p = self.positive(depth)
        return p if self.rng.random() < 0.5 else self.g.neg(p)

    def condition(self, depth: int) -> Node:
        """A 0/1-valued condition: a comparison or and/or/not of conditions."""
        g, r = self.g, self.rng.random()
        if depth > 0 and r < 0.15:
            return g.apply("not", self.condition(depth - 1))
        if depth > 0 and r < 0.35:
            return g.apply(self.choice(("and", "or")), self.condition(depth - 1),
                           self.condition(depth - 1))
        op = self.choice(COMPARISONS)
        if op in ("eq", "ne") and self.rng.random() < 0.6:
            # integer-valued on both sides, so equality really happens at points
            return g.cmp(op, g.floor(g.mul(g.const(1.5), self.any(depth - 1))),
                         g.const(float(self.rng.integers(-2, 2))))
        return g.cmp(op, *self.distinct_pair(depth - 1))

    def distinct_pair(self, depth: int):
        """Two expressions that are not the same node.  (``x < x`` is a constant
        CasADi folds away but caspar keeps; avoided so structures stay comparable.)"""
        a = self.any(depth)
        for _ in range(20):
            b = self.any(depth)
            if b is not a:
                return a, b
        return a, self.g.add(a, self.c())

    def expr(self, depth: int, root_op: str | None = None) -> Node:
        if root_op is None:
            return self.any(depth)
        return OP_BUILDERS[root_op](self, max(depth - 1, 0))

    def expr_with(self, depth: int, root_op: str, tries: int = 50) -> Node:
        """An expression whose DAG contains ``root_op`` and at least one variable."""
        for _ in range(tries):
            e = self.expr(depth, root_op)
            order = topo_order([e])
            if (any(n.op == root_op for n in order)
                    and any(n.op == "var" for n in order)):
                return e
        raise RuntimeError(f"could not build an expression containing {root_op}")


def _b_unary(op, arg="any"):
    def build(gen, d):
        a = getattr(gen, arg)(d)
        return gen.g.apply(op, a)
    return build


def _b_sum(gen, d):
    k = int(gen.rng.integers(3, 6))
    terms = [gen.any(d) for _ in range(k)]
    if gen.rng.random() < 0.3:
        terms.append(gen.c())
    return gen.g.sum(terms)


def _b_lincomb(gen, d):
    k = int(gen.rng.integers(2, 5))
    coefs, terms = [], []
    for _ in range(k):
        r = gen.rng.random()
        if r < 0.2 and gen.params:
            coefs.append(gen.g.param(gen.choice(gen.params)))
        elif r < 0.35:      # a variable coefficient: lincomb is bilinear in its pairs
            coefs.append(gen.bounded(d))
        else:
            coefs.append(gen.c())
        terms.append(gen.g.var(gen.choice(gen.vars)) if gen.rng.random() < 0.6
                     else gen.any(d))
    return gen.g.lincomb(coefs, terms)


def _b_powi(gen, d):
    n = gen.choice(POWI_EXPONENTS)
    base = gen.nonzero(d) if n < 0 else gen.bounded(d)
    return gen.g.powi(base, n)


def _b_pow(gen, d):
    g, r = gen.g, gen.rng.random()
    if r < 0.5:       # positive ** real constant
        return g.pow(gen.positive(d), g.const(gen.choice(REAL_EXPONENTS)))
    if r < 0.8:       # positive ** variable exponent
        return g.pow(gen.positive(d), gen.bounded(d))
    return g.pow(gen.c(0.5, 3.0) if gen.rng.random() < 0.5 else gen.positive(d),
                 gen.bounded(d))


def _b_cmp(op):
    def build(gen, d):
        return gen.g.cmp(op, *gen.distinct_pair(d))
    return build


def _b_logic(op):
    def build(gen, d):
        if op == "not":
            return gen.g.apply("not", gen.condition(d))
        return gen.g.apply(op, gen.condition(d), gen.condition(d))
    return build


def _b_if_else(gen, d):
    return gen.g.if_else(gen.condition(d), gen.any(d), gen.any(d))


def _b_atan2(gen, d):
    g = gen.g
    if gen.rng.random() < 0.5:
        return g.atan2(gen.any(d), gen.positive(d))   # right half plane: no cut
    return g.atan2(gen.nonzero(d), gen.any(d))         # off the x axis: no cut


def _b_hypot(gen, d):
    if gen.rng.random() < 0.5:
        return gen.g.hypot(gen.any(d), gen.nonzero(d))
    return gen.g.hypot(gen.nonzero(d), gen.any(d))


def _b_floorceil(op):
    def build(gen, d):
        g = gen.g
        f = g.apply(op, g.mul(gen.c(1.0, 3.0), gen.any(d)))
        # a floor alone has zero derivative; let it scale something smooth
        return g.mul(f, gen.any(d)) if gen.rng.random() < 0.6 else g.add(f, gen.any(d))
    return build


def _b_sign(gen, d):
    g = gen.g
    return g.mul(g.sign(gen.any(d)), gen.any(d)) if gen.rng.random() < 0.7 \
        else g.sign(gen.any(d))


def _b_binary(op):
    def build(gen, d):
        return gen.g.apply(op, gen.any(d), gen.any(d))
    return build


#: op name -> builder(gen, depth) -> Node; must cover ops.OPS exactly
OP_BUILDERS = {
    "add": _b_binary("add"),
    "sub": _b_binary("sub"),
    "mul": _b_binary("mul"),
    "div": lambda gen, d: gen.g.div(gen.any(d), gen.nonzero(d)),
    "neg": _b_unary("neg"),
    "sum": _b_sum,
    "lincomb": _b_lincomb,
    "powi": _b_powi,
    "pow": _b_pow,
    "exp": _b_unary("exp", "bounded"),
    "log": _b_unary("log", "positive"),
    "log10": _b_unary("log10", "positive"),
    "sqrt": _b_unary("sqrt", "positive"),
    "sin": _b_unary("sin"),
    "cos": _b_unary("cos"),
    "tan": lambda gen, d: gen.g.tan(gen.g.mul(gen.g.const(1.2), gen.g.tanh(gen.any(d)))),
    "asin": _b_unary("asin", "unit"),
    "acos": _b_unary("acos", "unit"),
    "atan": _b_unary("atan"),
    "sinh": _b_unary("sinh", "bounded"),
    "cosh": _b_unary("cosh", "bounded"),
    "tanh": _b_unary("tanh"),
    "asinh": _b_unary("asinh"),
    "acosh": lambda gen, d: gen.g.acosh(gen.g.add(gen.g.const(1.0), gen.positive(d))),
    "atanh": _b_unary("atanh", "unit"),
    "erf": _b_unary("erf"),
    "expm1": _b_unary("expm1", "bounded"),
    "log1p": lambda gen, d: gen.g.log1p(gen.g.sub(gen.positive(d), gen.g.const(1.4))),
    "atan2": _b_atan2,
    "hypot": _b_hypot,
    "abs": _b_unary("abs"),
    "sign": _b_sign,
    "floor": _b_floorceil("floor"),
    "ceil": _b_floorceil("ceil"),
    "fmin": _b_binary("fmin"),
    "fmax": _b_binary("fmax"),
    **{op: _b_cmp(op) for op in COMPARISONS},
    "and": _b_logic("and"),
    "or": _b_logic("or"),
    "not": _b_logic("not"),
    "if_else": _b_if_else,
}

# ops picked for inner nodes of random trees (0/1-valued ops only through if_else)
_RANDOM_OPS = tuple(k for k in OP_BUILDERS if k not in COMPARISONS + ("and", "or", "not"))


# --------------------------------------------------------------------------
# points inside domains, away from kinks
# --------------------------------------------------------------------------
def node_values(roots, x, p=()) -> dict[int, float]:
    """{node id: value} for every node reachable from ``roots`` (fold rules)."""
    order = topo_order(roots)
    vals = evaluate(order, x, p)
    return {n.id: v for n, v in zip(order, vals)}


def _frac_dist(v):
    return abs(v - round(v))


def _domain_margin(n: Node, a: list[float]) -> float:
    """Distance (in the argument) of ``n`` from its domain edge or kink; +inf if none."""
    op = n.op
    if op in ("log", "log10", "sqrt"):
        return a[0]
    if op == "log1p":
        return a[0] + 1.0
    if op in ("asin", "acos", "atanh"):
        return 1.0 - abs(a[0])
    if op == "acosh":
        return a[0] - 1.0
    if op == "div":
        return abs(a[1])
    if op == "powi" and n.attr < 0:
        return abs(a[0])
    if op == "pow":
        return a[0]
    if op == "tan":
        return abs(math.cos(a[0]))
    if op == "atan2":
        return abs(a[0]) if a[1] <= 0 else math.hypot(a[0], a[1])
    if op == "hypot":
        return math.hypot(a[0], a[1])
    if op in ("abs", "sign"):
        return abs(a[0])
    if op in ("floor", "ceil"):
        return _frac_dist(a[0])
    if op in ("fmin", "fmax") or op in COMPARISONS:
        return math.inf if n.args[0] is n.args[1] else abs(a[0] - a[1])
    return math.inf


def _signature(order, vals) -> tuple:
    """Discrete outcome of every non-smooth node at a point."""
    sig = []
    for n in order:
        if n.op in NONSMOOTH:
            a = [vals[c.id] for c in n.args]
            if n.op in ("fmin", "fmax"):
                sig.append(a[0] < a[1])
            elif n.op == "abs":
                sig.append(a[0] > 0)
            elif n.op == "if_else":
                sig.append(a[0] != 0)
            else:
                sig.append(vals[n.id])
    return tuple(sig)


def point_ok(roots, x, p=(), *, kink_margin=1e-2, domain_margin=0.05, radius=1e-3,
             max_abs=1e3) -> bool:
    """True when every node of ``roots`` is finite and moderate at (x, p), inside
    its domain by ``domain_margin``, away from kinks by ``kink_margin``, and the
    discrete signature is unchanged at ``x +- radius*e_j`` for every variable j."""
    order = topo_order(roots)
    vals = node_values(roots, x, p)
    for n in order:
        v = vals[n.id]
        if not math.isfinite(v) or abs(v) > max_abs:
            return False
        if n.args:
            m = _domain_margin(n, [vals[c.id] for c in n.args])
            lim = kink_margin if n.op in NONSMOOTH else domain_margin
            if m < lim:
                return False
    base = _signature(order, vals)
    if not base:
        return True
    used = sorted({n.attr for n in order if n.op == "var"})
    x = np.asarray(x, dtype=float)
    for j in used:
        for s in (-radius, radius):
            xs = x.copy()
            xs[j] += s
            v2 = node_values(roots, xs, p)
            if _signature(order, v2) != base:
                return False
    return True


def sample_point(rng, roots, n, p, var_idx=None, tries=200, **kw):
    """A point in [-1.5, 1.5]^n (only ``var_idx`` entries resampled) that
    satisfies :func:`point_ok`, or None."""
    idx = np.arange(n) if var_idx is None else np.asarray(var_idx)
    x = np.zeros(n)
    for _ in range(tries):
        x[idx] = rng.uniform(-1.5, 1.5, size=len(idx))
        if point_ok(roots, x, p, **kw):
            return x
    return None


# --------------------------------------------------------------------------
# CasADi translation
# --------------------------------------------------------------------------
def _casadi_table():
    import casadi as ca

    def pow_(a, b, node):
        if node.args[1].op == "const":
            return ca.constpow(a, node.args[1].attr)
        return ca.power(a, b)

    def lincomb(*a):
        return sum(a[k] * a[k + 1] for k in range(0, len(a), 2))

    t = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b, "div": lambda a, b: a / b, "neg": lambda a: -a,
        "sum": lambda *a: sum(a[1:], a[0]), "lincomb": lincomb,
        "exp": ca.exp, "log": ca.log, "log10": ca.log10, "sqrt": ca.sqrt,
        "sin": ca.sin, "cos": ca.cos, "tan": ca.tan, "asin": ca.asin, "acos": ca.acos,
        "atan": ca.atan, "sinh": ca.sinh, "cosh": ca.cosh, "tanh": ca.tanh,
        "asinh": ca.asinh, "acosh": ca.acosh, "atanh": ca.atanh, "erf": ca.erf,
        "expm1": ca.expm1, "log1p": ca.log1p, "atan2": ca.atan2, "hypot": ca.hypot,
        "abs": ca.fabs, "sign": ca.sign, "floor": ca.floor, "ceil": ca.ceil,
        "fmin": ca.fmin, "fmax": ca.fmax,
        "lt": ca.lt, "le": ca.le, "eq": ca.eq, "ne": ca.ne, "ge": ca.ge, "gt": ca.gt,
        "and": ca.logic_and, "or": ca.logic_or, "not": ca.logic_not,
        "if_else": lambda c, a, b: ca.if_else(c, a, b),
    }
    special = {"powi": lambda args, node: ca.constpow(args[0], float(node.attr)),
               "pow": lambda args, node: pow_(args[0], args[1], node)}
    return t, special


def casadi_ops() -> set:
    """Op names the CasADi translator knows (a test checks == ops.OPS)."""
    t, special = _casadi_table()
    return set(t) | set(special)


def to_casadi(roots, xsym, psym=None):
    """Translate caspar nodes to CasADi SX: ``var(i) -> xsym[i]``,
    ``param(k) -> psym[k]``.  Returns a list of SX scalars."""
    import casadi as ca

    table, special = _casadi_table()
    memo = {}
    for n in topo_order(roots):
        op = n.op
        if op == "const":
            v = ca.SX(n.attr)
        elif op == "var":
            v = xsym[n.attr]
        elif op == "param":
            v = psym[n.attr]
        elif op in special:
            v = special[op]([memo[a.id] for a in n.args], n)
        else:
            v = table[op](*[memo[a.id] for a in n.args])
        memo[n.id] = v
    return [memo[r.id] for r in roots]


# --------------------------------------------------------------------------
# finite differences
# --------------------------------------------------------------------------
def richardson(f, x, direction, h):
    """Central difference of ``f`` along ``direction`` with one Richardson step
    (error O(h^4)): (4 D(h/2) - D(h)) / 3, D(t) = (f(x+t d) - f(x-t d)) / 2t.
    ``f`` may return arrays."""
    d = np.asarray(direction, dtype=float)

    def D(t):
        return (np.asarray(f(x + t * d)) - np.asarray(f(x - t * d))) / (2.0 * t)

    return (4.0 * D(h / 2.0) - D(h)) / 3.0


def rel_err(a, b, floor=1.0):
    """Elementwise |a - b| / max(|b|, floor)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b) / np.maximum(np.abs(b), floor)


# --------------------------------------------------------------------------
# a large flat model of three repeated shapes (tests/compiler/test_patterns.py, benchmarks)
# --------------------------------------------------------------------------
def three_shape_model(m: int, n: int, seed: int = 0, n_params: int = 7):
    """An NLPModel with ``m`` constraints drawn, in shuffled order, from three shapes
    over random variable pairs a != b in range(n) (so Hessian entries collide
    across instances), and an objective that is a sum of ``n`` squares::

        A_i = c_i x_a x_a + sin(x_b) x_a - p_k      (x_a repeated inside the instance)
        B_i = exp(x_a - x_b) + c_i x_b**3
        C_i = x_a x_b / (1 + x_a**2)
        f   = sum_j w_j (x_j - t_j)**2

    Constants are drawn from [0.5, 2] (never 0 or 1, which would simplify a
    shape away).  Returns ``(model, info)`` with the per-constraint shape code
    (0, 1, 2), indices and constants, for hand-written reference derivatives.
    """
    from caspar_backend.model import NLPModel

    rng = np.random.default_rng(seed)
    g = Graph()
    shape = rng.integers(0, 3, size=m)
    a = rng.integers(0, n, size=m)
    b = (a + rng.integers(1, n, size=m)) % n          # b != a
    c = rng.uniform(0.5, 2.0, size=m)
    k = rng.integers(0, n_params, size=m)
    w = rng.uniform(0.5, 2.0, size=n)
    t = rng.uniform(-1.0, 1.0, size=n)
    xs = [g.var(j) for j in range(n)]
    ps = [g.param(q) for q in range(n_params)]
    one = g.const(1.0)
    cons = []
    for i in range(m):
        xa, xb, ci = xs[a[i]], xs[b[i]], g.const(c[i])
        if shape[i] == 0:
            e = g.sub(g.add(g.mul(g.mul(ci, xa), xa), g.mul(g.sin(xb), xa)), ps[k[i]])
        elif shape[i] == 1:
            e = g.add(g.exp(g.sub(xa, xb)), g.mul(ci, g.powi(xb, 3)))
        else:
            e = g.div(g.mul(xa, xb), g.add(one, g.powi(xa, 2)))
        cons.append(e)
    obj = g.sum([g.mul(g.const(w[j]), g.powi(g.sub(xs[j], g.const(t[j])), 2))
                 for j in range(n)])
    p = rng.uniform(0.5, 1.5, size=n_params)
    model = NLPModel(g, obj, cons, lbx=np.full(n, -5.0), ubx=np.full(n, 5.0),
                     lbg=np.full(m, -1.0), ubg=np.full(m, 1.0),
                     x0=rng.uniform(-1.0, 1.0, size=n), p=p)
    info = dict(shape=shape, a=a, b=b, c=c, k=k, w=w, t=t, p=p)
    return model, info


def three_shape_reference(info, x, lam, sigma):
    """Hand-derived values, Jacobian and lower-triangle Lagrangian Hessian of
    :func:`three_shape_model` (scipy.sparse, duplicates summed)."""
    import scipy.sparse as sp

    s, a, b, c, k = info["shape"], info["a"], info["b"], info["c"], info["k"]
    w, t, p = info["w"], info["t"], info["p"]
    n, m = len(w), len(s)
    xa, xb = x[a], x[b]
    E = np.exp(xa - xb)
    D = 1.0 + xa ** 2
    val = np.select([s == 0, s == 1],
                    [c * xa * xa + np.sin(xb) * xa - p[k], E + c * xb ** 3],
                    xa * xb / D)
    ja = np.select([s == 0, s == 1], [2 * c * xa + np.sin(xb), E], xb * (1 - xa ** 2) / D ** 2)
    jb = np.select([s == 0, s == 1], [np.cos(xb) * xa, -E + 3 * c * xb ** 2], xa / D)
    haa = np.select([s == 0, s == 1], [2 * c, E], -2 * xa * xb * (3 - xa ** 2) / D ** 3)
    hab = np.select([s == 0, s == 1], [np.cos(xb), -E], (1 - xa ** 2) / D ** 2)
    hbb = np.select([s == 0, s == 1], [-np.sin(xb) * xa, E + 6 * c * xb], 0.0 * xa)
    rows = np.arange(m)
    J = sp.csr_matrix((np.r_[ja, jb], (np.r_[rows, rows], np.r_[a, b])), shape=(m, n))
    hi, hj = np.maximum(a, b), np.minimum(a, b)
    Hl = sp.csr_matrix((np.r_[lam * haa, lam * hab, lam * hbb, sigma * 2 * w],
                        (np.r_[a, hi, b, np.arange(n)], np.r_[a, hj, b, np.arange(n)])),
                       shape=(n, n))
    Hfull = (Hl + Hl.T - sp.diags(Hl.diagonal())).tocsr()
    f = float(np.sum(w * (x - t) ** 2))
    grad = 2 * w * (x - t)
    return dict(f=f, grad=grad, g=val, J=J, H=Hfull)
