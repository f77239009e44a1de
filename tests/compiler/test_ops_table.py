"""The op table is complete and every entry agrees with an independent reference.

* every op has arity, fold, numpy, cuda, d1, d2 and they have the right shape;
* the NumPy spelling evaluates to the same values as ``fold``;
* ``d1`` equals central finite differences (with Richardson extrapolation) of ``fold``;
* ``d2`` equals finite differences of ``d1`` -- including the *absent* entries,
  which must be zero (that is what makes the Hessian structurally exact);
* the non-smooth ops follow CasADi's conventions at their kinks.

Sample points lie inside each op's domain and, for non-smooth ops, at least 0.1
away from kinks; the kink conventions are tested separately at the kinks.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from caspar_backend import ops
from caspar_backend.expr import Graph, Node, evaluate
from tests.support.exprgen import COMPARISONS, richardson

ALL = sorted(ops.OPS)
SMOOTH_EXPECTED_FALSE = {"abs", "sign", "floor", "ceil", "fmin", "fmax", "and", "or", "not",
                         "if_else", *COMPARISONS}


# ------------------------------------------------------------------ samplers
def _away_from_int(rng, lo, hi, margin=0.1):
    while True:
        v = rng.uniform(lo, hi)
        if abs(v - round(v)) > margin:
            return v


def _away_from_zero(rng, lo=0.3, hi=2.0):
    return float(rng.choice([-1.0, 1.0]) * rng.uniform(lo, hi))


def _pair_apart(rng, margin=0.1):
    while True:
        a, b = rng.uniform(-2, 2, size=2)
        if abs(a - b) > margin:
            return [a, b]


_DOMAIN = {
    "log": (0.3, 3.0), "log10": (0.3, 3.0), "sqrt": (0.3, 3.0), "log1p": (-0.7, 3.0),
    "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.2, 3.0),
    "tan": (-1.2, 1.2), "exp": (-2.0, 2.0), "sinh": (-2.0, 2.0), "cosh": (-2.0, 2.0),
    "expm1": (-2.0, 2.0),
}
_TRUTHY = (1.0, -2.0, 0.5)   # condition values away from 0 (FD may perturb them)


def sample(op: str, rng, k: int):
    """(args, attr) for sample k of ``op``: inside the domain, away from kinks."""
    spec = ops.OPS[op]
    if op in ("abs", "sign"):
        return [_away_from_zero(rng, 0.1)], None
    if op in ("floor", "ceil"):
        return [_away_from_int(rng, -3, 3)], None
    if op == "powi":
        n = (2, 3, 4, 5, -1, -2, -3, 0, 1, 7)[k % 10]
        return [_away_from_zero(rng, 0.3, 1.8)], n
    if op == "pow":
        return [rng.uniform(0.3, 3.0), rng.uniform(-2.0, 2.0)], None
    if op == "div":
        return [rng.uniform(-2, 2), _away_from_zero(rng)], None
    if op == "atan2":
        return ([rng.uniform(-2, 2), rng.uniform(0.2, 2)] if k % 2 else
                [_away_from_zero(rng), rng.uniform(-2, 2)]), None
    if op == "hypot":
        return [_away_from_zero(rng), rng.uniform(-2, 2)][:: 1 if k % 2 else -1], None
    if op in ("fmin", "fmax") or op in COMPARISONS:
        return _pair_apart(rng), None
    if op in ("and", "or", "not"):
        return [float(rng.choice(_TRUTHY + (0.0,))) for _ in range(spec.arity)], None
    if op == "if_else":
        return [float(rng.choice(_TRUTHY + (0.0,))), *rng.uniform(-2, 2, size=2)], None
    if op == "sum":
        return list(rng.uniform(-2, 2, size=2 + k % 4)), None
    if op == "lincomb":
        return list(rng.uniform(-2, 2, size=2 * (1 + k % 3))), None
    lo, hi = _DOMAIN.get(op, (-2.0, 2.0))
    return list(rng.uniform(lo, hi, size=spec.arity)), None


def fd_safe(op, args, i):
    """False where an FD along argument i would cross a discontinuity."""
    if op in ("and", "or", "not") or (op == "if_else" and i == 0):
        return args[i] != 0.0
    return True


def build(op, nargs, attr):
    """A graph, the variable leaves and the node op(x0, ..., x_{k-1})."""
    g = Graph()
    xs = [g.var(i) for i in range(nargs)]
    node = g.apply(op, *xs, attr=attr)
    return g, xs, node


def fold(op, args, attr):
    f = ops.OPS[op].fold
    return float(f(*args, attr) if op == "powi" else f(*args))


N_SAMPLES = 12


def _cases(op):
    rng = np.random.default_rng(sum(map(ord, op)))
    return [sample(op, rng, k) for k in range(N_SAMPLES)]


# ---------------------------------------------------------------- the table
@pytest.mark.parametrize("name", ALL)
def test_every_op_has_every_entry(name):
    spec = ops.OPS[name]
    assert isinstance(spec, ops.Op)
    assert spec.name == name
    assert spec.arity is None or (isinstance(spec.arity, int) and spec.arity >= 1)
    for field in ("fold", "numpy", "cuda", "d1", "d2"):
        assert callable(getattr(spec, field)), f"{name}.{field}"
    assert isinstance(spec.smooth, bool)
    nargs = spec.arity or 4
    attr = 3 if name == "powi" else None
    names = [f"a{i}" for i in range(nargs)]
    for spelling in (spec.numpy(names, attr), spec.cuda(names, attr)):
        assert isinstance(spelling, str) and spelling
        for a in names:
            assert re.search(rf"\b{a}\b", spelling), f"{name}: {a} missing from {spelling!r}"
    g, xs, node = build(name, nargs, attr)
    assert node.op == name, f"building {name} on variables simplified it to {node.op}"
    for i in range(nargs):
        assert isinstance(spec.d1(g, node, i), Node)
    d2 = spec.d2(g, node)
    assert isinstance(d2, dict)
    for key, v in d2.items():
        i, j = key
        assert 0 <= j <= i < nargs, f"{name}: d2 key {key} not lower-triangle / in range"
        assert isinstance(v, Node)


def test_smooth_flags():
    assert {k for k, v in ops.OPS.items() if not v.smooth} == SMOOTH_EXPECTED_FALSE


def test_op_set_is_the_issue_list():
    required = {"add", "sub", "mul", "div", "pow", "powi", "neg", "exp", "log", "log10", "sqrt",
                "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh",
                "asinh", "acosh", "atanh", "abs", "sign", "floor", "ceil", "fmin", "fmax", "erf",
                "if_else", "and", "or", "not", "sum", "lincomb", *COMPARISONS}
    assert required <= set(ops.OPS)
    assert not set(ops.LEAVES) & set(ops.OPS)


def test_unknown_op_lookup_names_the_op():
    from caspar_backend.errors import UnsupportedOpError

    with pytest.raises(UnsupportedOpError, match="frobnicate"):
        ops.get("frobnicate")


# ------------------------------------------------------------ NumPy spelling
def _namespace():
    try:
        from caspar_backend.codegen_numpy import NAMESPACE
        return dict(NAMESPACE)
    except ImportError:  # pragma: no cover - before the codegen module exists
        from scipy.special import erf
        return {"np": np, "erf": erf}


@pytest.mark.parametrize("name", ALL)
def test_numpy_spelling_equals_fold(name):
    cases = _cases(name)
    ns = _namespace()
    # vectorize over all samples with the same arity/attr
    by_shape: dict = {}
    for args, attr in cases:
        by_shape.setdefault((len(args), attr), []).append(args)
    for (k, attr), rows in by_shape.items():
        arr = np.array(rows, dtype=float).T  # (k, S)
        local = dict(ns, **{f"a{i}": arr[i] for i in range(k)})
        text = ops.OPS[name].numpy([f"a{i}" for i in range(k)], attr)
        got = np.broadcast_to(eval(text, local), (arr.shape[1],))  # noqa: S307 - our spelling
        want = np.array([fold(name, r, attr) for r in rows])
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15,
                                   err_msg=f"{name} numpy spelling {text!r}")


# CUDA math functions a spelling may call (double precision, device side)
_CUDA_MATH = {"exp", "log", "log10", "sqrt", "sin", "cos", "tan", "asin", "acos", "atan",
              "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "expm1",
              "log1p", "hypot", "fabs", "floor", "ceil", "fmin", "fmax", "pow"}


@pytest.mark.parametrize("name", ALL)
def test_cuda_spelling_uses_known_functions(name):
    spec = ops.OPS[name]
    nargs = spec.arity or 4
    for attr in ((2, 3, -1, -2) if name == "powi" else (None,)):
        text = spec.cuda([f"a{i}" for i in range(nargs)], attr)
        assert "np." not in text, text
        called = set(re.findall(r"([A-Za-z_]\w*)\s*\(", text))
        unknown = {f for f in called if f not in _CUDA_MATH and not f.startswith("caspar_")}
        assert not unknown, f"{name}: unknown CUDA functions {unknown} in {text!r}"
        assert text.count("(") == text.count(")")


def test_cuda_helpers_are_defined_in_the_device_header():
    from pathlib import Path

    helpers = set()
    for name, spec in ops.OPS.items():
        nargs = spec.arity or 4
        for attr in ((3, -2) if name == "powi" else (None,)):
            helpers |= set(re.findall(r"(caspar_\w+)\s*\(",
                                      spec.cuda([f"a{i}" for i in range(nargs)], attr)))
    header = Path(__file__).resolve().parents[2] / "kernels" / "caspar_device.cuh"
    if not header.exists():
        pytest.skip("kernels/caspar_device.cuh not written yet (the CUDA evaluator's issue)")
    text = header.read_text()
    missing = {h for h in helpers if not re.search(rf"\b{h}\s*\(", text)}
    assert not missing, f"helpers used by the op table but not in {header.name}: {missing}"


# ------------------------------------------------------------ derivative rules
H = 1e-3
TOL = 1e-7


def _fd_fold(name, args, attr, i):
    f = lambda v: fold(name, [float(t) for t in v], attr)  # noqa: E731
    e = np.zeros(len(args))
    e[i] = 1.0
    return float(richardson(f, np.array(args, float), e, H * max(1.0, abs(args[i]))))


@pytest.mark.parametrize("name", ALL)
def test_d1_matches_finite_differences_of_fold(name):
    spec = ops.OPS[name]
    for args, attr in _cases(name):
        g, xs, node = build(name, len(args), attr)
        if node.op != name:   # powi 0/1 simplify away: the rule is not used
            continue
        for i in range(len(args)):
            if not fd_safe(name, args, i):
                continue
            got = evaluate([spec.d1(g, node, i)], args)[0]
            want = _fd_fold(name, args, attr, i)
            err = abs(got - want) / max(1.0, abs(want))
            assert err <= TOL, (f"d{name}/darg{i} at {args} attr={attr}: rule {got!r}, "
                                f"finite differences {want!r}")


@pytest.mark.parametrize("name", ALL)
def test_d2_matches_finite_differences_of_d1(name):
    spec = ops.OPS[name]
    for args, attr in _cases(name):
        g, xs, node = build(name, len(args), attr)
        if node.op != name:
            continue
        d2 = spec.d2(g, node)
        k = len(args)
        for i in range(k):
            d1_i = spec.d1(g, node, i)
            for j in range(k):
                if not fd_safe(name, args, j):
                    continue
                f = lambda v: evaluate([d1_i], list(v))[0]  # noqa: E731
                e = np.zeros(k)
                e[j] = 1.0
                want = float(richardson(f, np.array(args, float), e,
                                        H * max(1.0, abs(args[j]))))
                key = (i, j) if i >= j else (j, i)
                got = evaluate([d2[key]], args)[0] if key in d2 else 0.0
                err = abs(got - want) / max(1.0, abs(want))
                assert err <= 1e-6, (
                    f"d2 {name}/darg{i}darg{j} at {args} attr={attr}: rule "
                    f"{'absent (structural zero)' if key not in d2 else repr(got)}, "
                    f"finite differences of d1 {want!r}")


# --------------------------------------------------- non-smooth conventions
def _ours_and_casadi(build_expr, point):
    """Gradient of build_expr(leaves) at ``point``: ours (op-table d1 through a
    reverse sweep over expr.evaluate) and CasADi's AD."""
    import casadi as ca
    from tests.support.exprgen import to_casadi

    from caspar_backend.expr import topo_order

    g = Graph()
    xs = [g.var(i) for i in range(len(point))]
    e = build_expr(g, xs)
    # reverse sweep with the op table (no caspar derivative module involved)
    order = topo_order([e])
    vals = dict(zip((n.id for n in order), evaluate(order, point)))
    adj = {e.id: 1.0}
    for n in reversed(order):
        a = adj.get(n.id, 0.0)
        if not n.args or a == 0.0:
            continue
        for i, u in enumerate(n.args):
            d = ops.OPS[n.op].d1(g, n, i)
            dv = evaluate([d], point)[0]
            adj[u.id] = adj.get(u.id, 0.0) + a * dv
    ours = [adj.get(x.id, 0.0) for x in xs]
    xsym = ca.SX.sym("x", len(point))
    ce = to_casadi([e], xsym)[0]
    theirs = ca.Function("j", [xsym], [ca.jacobian(ce, xsym)])(point)
    return np.array(ours), np.array(theirs, dtype=float).reshape(-1), vals[e.id]


_KINKS = [
    # (description, builder, point, expected gradient)
    ("abs'(0) = 0", lambda g, x: abs(x[0]), [0.0], [0.0]),
    ("sign'(0) = 0", lambda g, x: g.sign(x[0]), [0.0], [0.0]),
    ("sign' = 0", lambda g, x: g.sign(x[0]), [0.7], [0.0]),
    ("floor' at an integer = 0", lambda g, x: g.floor(x[0]), [2.0], [0.0]),
    ("ceil' at an integer = 0", lambda g, x: g.ceil(x[0]), [-1.0], [0.0]),
    ("fmin tie splits 1/2:1/2", lambda g, x: g.fmin(x[0], x[1]), [0.3, 0.3], [0.5, 0.5]),
    ("fmax tie splits 1/2:1/2", lambda g, x: g.fmax(x[0], x[1]), [0.3, 0.3], [0.5, 0.5]),
    ("fmin off the tie", lambda g, x: g.fmin(x[0], x[1]), [0.2, 0.3], [1.0, 0.0]),
    ("fmax off the tie", lambda g, x: g.fmax(x[0], x[1]), [0.2, 0.3], [0.0, 1.0]),
    ("comparison at a tie has zero derivative",
     lambda g, x: g.cmp("le", x[0], x[1]), [1.0, 1.0], [0.0, 0.0]),
    ("if_else differentiates the taken branch (true)",
     lambda g, x: g.if_else(g.cmp("lt", x[0], x[1]), x[0] * x[1], g.sin(x[1])),
     [0.5, 0.5001], [0.5001, 0.5]),
    ("if_else differentiates the taken branch (false)",
     lambda g, x: g.if_else(g.cmp("lt", x[0], x[1]), x[0] * x[1], g.sin(x[1])),
     [0.5, 0.5], [0.0, math.cos(0.5)]),
    ("if_else with a logical condition",
     lambda g, x: g.if_else(g.apply("and", g.cmp("ge", x[0], 0.0), g.apply("not",
                            g.cmp("gt", x[1], 1.0))), x[0] ** 3, -x[1]),
     [0.5, 1.0], [0.75, 0.0]),
]


@pytest.mark.parametrize("desc,build_expr,point,expected", _KINKS,
                         ids=[k[0] for k in _KINKS])
def test_nonsmooth_conventions_match_casadi(desc, build_expr, point, expected):
    pytest.importorskip("casadi")
    ours, theirs, _ = _ours_and_casadi(build_expr, np.array(point, float))
    np.testing.assert_allclose(theirs, expected, atol=1e-15,
                               err_msg=f"CasADi's convention changed? {desc}")
    np.testing.assert_allclose(ours, expected, atol=1e-15, err_msg=desc)


def test_nonsmooth_ops_have_no_second_derivative_rules():
    """abs, sign, floor, ceil, fmin, fmax, comparisons, logic and if_else are
    piecewise linear in their smooth arguments: d2 is structurally empty."""
    for name in SMOOTH_EXPECTED_FALSE:
        spec = ops.OPS[name]
        g, xs, node = build(name, spec.arity or 2, None)
        assert spec.d2(g, node) == {}, name


def _fold_accepts_numpy_scalars(name):
    rng = np.random.default_rng(3)
    args, attr = sample(name, rng, 1)
    f = ops.OPS[name].fold
    a = [np.float64(v) for v in args]
    got = f(*a, attr) if name == "powi" else f(*a)
    assert float(got) == fold(name, [float(v) for v in args], attr)


@pytest.mark.parametrize("name", ALL)
def test_fold_accepts_numpy_scalars(name):
    """Adapters may fold NumPy scalars (Pyomo/CasADi data); fold must not care."""
    _fold_accepts_numpy_scalars(name)
