"""Vectorized NumPy source for a pattern group's template.

For a group with N instances the generated module defines three functions
over the gathered instance tables ``X`` (k, N) = x[var_table],
``P`` (q, N) = p[param_table] and ``D`` (r, N) = data_table:

* ``val(X, P, D, N) -> (N,)``   the template's values;
* ``jac(X, P, D, out, base, N)`` writes gradient entry e of every instance to
  ``out[base + e*N : base + (e+1)*N]`` (the Jacobian row entries of constraint
  groups, the gradient terms of objective groups);
* ``hess(X, P, D, W, out, base, N)`` writes ``W * h_e`` for every lower-triangle
  Hessian entry e in the same layout (``W``: the multiplier of each instance,
  or the objective factor).

Each function is straight-line code over the topologically sorted template DAG
restricted to what it needs, so every op is one NumPy call over all N
instances.  The source is kept (``GeneratedGroup.source``) for inspection and
compiled once per distinct source text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ops as _ops
from .expr import Node, topo_order

_WIDE = 32  # n-ary sums wider than this go through a helper (Python's parser nests binops)


def _nsum(*a):
    s = a[0] + a[1]
    for t in a[2:]:
        s = s + t
    return s


def _nlincomb(*a):
    s = a[0] * a[1]
    for k in range(2, len(a), 2):
        s = s + a[k] * a[k + 1]
    return s


#: names generated code may use
def _full(v, N):
    """``v`` as an (N,) array: itself when it is one already (np.broadcast_to costs
    ~10 us of Python per call, and most values have the instances' shape), else a
    read-only broadcast view of a scalar or 0-d value."""
    if type(v) is np.ndarray and v.shape == (N,):
        return v
    return np.broadcast_to(v, (N,))


def _erf(x):
    """``scipy.special.erf``, imported on first use (SciPy's special functions take
    ~0.3 s to import, paid only by the models that call erf)."""
    from scipy.special import erf

    return erf(x)


NAMESPACE = {"np": np, "erf": _erf, "_nsum": _nsum, "_nlincomb": _nlincomb,
             "_full": _full}


def _leaf(n: Node) -> str:
    if n.op == "const":
        return repr(float(n.attr))
    return {"var": "X", "param": "P", "data": "D"}[n.op] + f"[{n.attr}]"


def _body(roots: list[Node], lines: list[str], indent: str = "    ") -> dict[int, str]:
    """Emit assignments for every non-leaf node reachable from ``roots``;
    return the expression text of every node."""
    name: dict[int, str] = {}
    for n in topo_order(roots):
        if not n.args:
            name[n.id] = _leaf(n)
            continue
        args = [name[a.id] for a in n.args]
        if n.op == "sum" and len(args) > _WIDE:
            text = f"_nsum({', '.join(args)})"
        elif n.op == "lincomb" and len(args) > 2 * _WIDE:
            text = f"_nlincomb({', '.join(args)})"
        else:
            text = _ops.OPS[n.op].numpy(args, n.attr)
        t = f"t{n.id}"
        lines.append(f"{indent}{t} = {text}")
        name[n.id] = t
    return name


@dataclass(frozen=True)
class GeneratedGroup:
    """Compiled NumPy functions of one template (final)."""

    source: str
    val: object
    jac: object
    hess: object


_CACHE: dict[str, GeneratedGroup] = {}


def generate_source(root: Node, grad: list, hess: list, name: str = "group") -> str:
    """Python source of ``val``, ``jac`` and ``hess`` for one template."""
    out = [f"# caspar generated: {name}", "def val(X, P, D, N):"]
    nm = _body([root], out)
    out.append(f"    return _full({nm[root.id]}, N)")
    out.append("")
    out.append("def jac(X, P, D, out, base, N):")
    nm = _body([e for _, e in grad], out)
    for k, (_, e) in enumerate(grad):
        out.append(f"    out[base + {k} * N:base + {k + 1} * N] = {nm[e.id]}")
    out.append("    return None")
    out.append("")
    out.append("def hess(X, P, D, W, out, base, N):")
    nm = _body([e for _, e in hess], out)
    for k, (_, e) in enumerate(hess):
        out.append(f"    out[base + {k} * N:base + {k + 1} * N] = W * {nm[e.id]}")
    out.append("    return None")
    return "\n".join(out) + "\n"


def compile_group(root: Node, grad: list, hess: list, name: str = "group") -> GeneratedGroup:
    """Generate and compile (cached by source text) the group's functions."""
    src = generate_source(root, grad, hess, name)
    key = src.split("\n", 1)[1]  # the name comment does not change the code
    hit = _CACHE.get(key)
    if hit is not None:
        return GeneratedGroup(src, hit.val, hit.jac, hit.hess)
    ns = dict(NAMESPACE)
    exec(compile(src, f"<caspar:{name}>", "exec"), ns)  # noqa: S102 - our own generated code
    gen = GeneratedGroup(src, ns["val"], ns["jac"], ns["hess"])
    _CACHE[key] = gen
    return gen


@dataclass(frozen=True)
class FusedGroups:
    """Compiled NumPy functions of several templates of one graph over the same instance
    tables (final): ``val(X, P, D, N) -> [values of each part]`` and ``jac(X, P, D, out,
    bases, N)`` writing part j's gradient entries from ``bases[j]`` in the layout of
    :func:`generate_source`.  A subexpression the parts share (hash-consing makes it one
    node of the shared graph) is computed once; every value is the same NumPy operation
    on the same operands as in the separate functions, so results are identical."""

    source: str
    val: object
    jac: object


def generate_fused_source(parts: list, name: str = "fused") -> str:
    """Python source of ``val`` and ``jac`` for ``parts`` = [(root, grad)] of one graph."""
    out = [f"# caspar generated: {name}", "def val(X, P, D, N):"]
    nm = _body([root for root, _ in parts], out)
    out.append("    return [" + ", ".join(f"_full({nm[root.id]}, N)" for root, _ in parts) + "]")
    out.append("")
    out.append("def jac(X, P, D, out, bases, N):")
    nm = _body([e for _, grad in parts for _, e in grad], out)
    for j, (_, grad) in enumerate(parts):
        out.append(f"    base = bases[{j}]")
        for k, (_, e) in enumerate(grad):
            out.append(f"    out[base + {k} * N:base + {k + 1} * N] = {nm[e.id]}")
    out.append("    return None")
    return "\n".join(out) + "\n"


def compile_fused(parts: list, name: str = "fused") -> FusedGroups:
    """Generate and compile (cached by source text) the fused functions of ``parts``."""
    src = generate_fused_source(parts, name)
    key = src.split("\n", 1)[1]
    hit = _CACHE.get(key)
    if hit is not None:
        return FusedGroups(src, hit.val, hit.jac)
    ns = dict(NAMESPACE)
    exec(compile(src, f"<caspar:{name}>", "exec"), ns)  # noqa: S102 - our own generated code
    gen = FusedGroups(src, ns["val"], ns["jac"])
    _CACHE[key] = gen
    return gen
