"""The CUDA build's elementwise loops with their loads batched: four elements' loads
issued before any of their stores (an experiment, off unless
``CASPAR_CUDA_BATCHED_LOADS=1``).

Why: every workspace slot is a view of one buffer, so the compiler may not move a load
above an earlier store, and a GPU thread issues in order.  In ``a[i] = f(b[i])`` the store
waits for its load, and the next element's load issues only after that store: one whole
memory latency per element, which a CPU core's out-of-order execution overlaps (one
thread's pieces of a Van der Pol iteration take 54-230 times a CPU core's time,
docs/compiled-ipm-cuda.md).  Four elements at a time, loads first, give the thread four
loads in flight.

The rewrite, for a loop ``for x in range(a, b)`` (step 1, no ``else``) whose body is
straight-line assignments -- each ``name = e``, ``name op= e``, ``arr[x] = e`` or
``arr[x] op= e`` -- where every array the body stores into is stored and loaded only at
index ``x`` (so the four elements touch four different entries of it), no load sits under
a conditional expression or a boolean operator (a hoisted load must be one the loop makes
anyway), and the only calls are to the pure functions of :data:`PURE`::

    for x in range(a, b):             _bl_i = a;  _bl_e = b
        body                          while _bl_i + 4 <= _bl_e:
                                          x0, x1, x2, x3 = _bl_i, _bl_i + 1, ...
                                          (copies 0..3 of the body, every scalar
                                           assignment and every load, in order)
                                          (copies 0..3 of the body's stores, in order)
                                          x = x3;  _bl_i += 4
                                      for x in range(_bl_i, _bl_e):
                                          body

Each copy's names are its own (a scalar carried from one element to the next -- a sum --
keeps its name, so its updates stay in element order; a carried scalar a store reads is
not allowed).  Every element gets the same operations in the same order, so the results
are the same bits as the loop's; arrays passed twice under two names are the one thing the
rule cannot see, which is why the transformed kernels are checked against the CPU's on
the bank before this is switched on.
"""
from __future__ import annotations

import ast
import copy
import os

#: calls a body may make: no memory effects
PURE = frozenset({"U", "abs", "min", "max", "float", "int", "nmin", "nmax", "sqrt", "exp",
                  "log", "isfinite", "isnan", "isinf", "fabs", "floor", "ceil"})
#: elements per batch
WIDTH = 4


def enabled() -> bool:
    """Whether the CUDA build batches loads (``CASPAR_CUDA_BATCHED_LOADS=1``)."""
    return os.environ.get("CASPAR_CUDA_BATCHED_LOADS", "0") == "1"


def _is_x(node, x: str) -> bool:
    return isinstance(node, ast.Name) and node.id == x


def _loads_ok(expr, x: str, written: set) -> bool:
    """No load of a written array except at index x; no load under IfExp/BoolOp; only
    pure calls."""
    for n in ast.walk(expr):
        if isinstance(n, (ast.IfExp, ast.BoolOp)):
            if any(isinstance(m, ast.Subscript) for m in ast.walk(n)):
                return False
        elif isinstance(n, ast.Call):
            f = n.func
            name = f.id if isinstance(f, ast.Name) else \
                f.attr if isinstance(f, ast.Attribute) else None
            if name not in PURE or n.keywords:
                return False
        elif isinstance(n, ast.Subscript):
            if not isinstance(n.value, ast.Name):
                return False
            if n.value.id in written and not _is_x(n.slice, x):
                return False
        elif isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            return False
    return True


def _eligible(node: ast.For):
    """(start, stop, loop var) of a loop the rewrite applies to, else None."""
    it = node.iter
    if node.orelse or not isinstance(node.target, ast.Name) or \
            not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                 and it.func.id == "range" and not it.keywords and 1 <= len(it.args) <= 3):
        return None
    args = list(it.args)
    if len(args) == 3 and not (isinstance(args[2], ast.Constant) and args[2].value == 1):
        return None
    start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else args[:2]
    x = node.target.id
    written, stores = set(), 0
    for s in node.body:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                return None
            t = s.targets[0]
        elif isinstance(s, ast.AugAssign):
            t = s.target
        else:
            return None
        if isinstance(t, ast.Subscript):
            if not (isinstance(t.value, ast.Name) and _is_x(t.slice, x)):
                return None
            written.add(t.value.id)
            stores += 1
        elif isinstance(t, ast.Name):
            if t.id == x:
                return None
        else:
            return None
    if stores == 0 or not any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load)
                              for s in node.body for n in ast.walk(s)):
        return None                     # (a reduction, or stores only: nothing to gain)
    for s in node.body:
        if not _loads_ok(s.value, x, written):
            return None
        t = s.targets[0] if isinstance(s, ast.Assign) else s.target
        if isinstance(t, ast.Subscript) and not _loads_ok(t, x, written):
            return None
    # a scalar assigned in the body and read before its assignment is carried from one
    # element to the next: allowed, unless a store reads it
    assigned, carried = set(), set()
    for s in node.body:
        reads = {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)}
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            reads.add(s.target.id)
        carried |= {r for r in reads if r not in assigned}
        t = s.targets[0] if isinstance(s, ast.Assign) else s.target
        if isinstance(t, ast.Name):
            assigned.add(t.id)
    carried &= assigned
    for s in node.body:
        t = s.targets[0] if isinstance(s, ast.Assign) else s.target
        if isinstance(t, ast.Subscript):
            if {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)} & carried:
                return None
    return start, stop, x, carried


class _Rename(ast.NodeTransformer):
    """Final.  Renames Name nodes by a mapping."""

    def __init__(self, mapping: dict):
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping:
            return ast.copy_location(ast.Name(self.mapping[node.id], node.ctx), node)
        return node


class _BatchLoads(ast.NodeTransformer):
    """Final.  The rewrite of the module docstring; ``count`` loops rewritten."""

    def __init__(self, unsigned_name: str = "U"):
        self.count = 0
        self.U = unsigned_name

    def visit_For(self, node):
        self.generic_visit(node)
        found = _eligible(node)
        if found is None:
            return node
        start, stop, x, carried = found
        given = [a for a in node.iter.args if not isinstance(a, ast.Constant)]
        is_u = [isinstance(a, ast.Call) and isinstance(a.func, ast.Name)
                and a.func.id == self.U for a in given]
        if any(is_u) and not all(is_u):
            return node                 # (mixed signedness: left as it is)
        unsigned = bool(is_u) and all(is_u)

        def lit(v):
            c = ast.Constant(v)
            return ast.Call(ast.Name(self.U, ast.Load()), [c], []) if unsigned else c

        k = self.count
        self.count += 1
        i, e = f"_bl{k}_i", f"_bl{k}_e"
        load, store = ast.Load, ast.Store
        locals_ = {t.id for s in node.body
                   for t in [s.targets[0] if isinstance(s, ast.Assign) else s.target]
                   if isinstance(t, ast.Name)} - carried
        phase1, phase2, xs = [], [], []
        for j in range(WIDTH):
            xj = f"_bl{k}_x{j}"
            xs.append(xj)
            phase1.append(ast.Assign([ast.Name(xj, store())],
                                     ast.BinOp(ast.Name(i, load()), ast.Add(), lit(j))
                                     if j else ast.Name(i, load())))
            mapping = {x: xj, **{n: f"_bl{k}_{n}_{j}" for n in locals_}}
            for s in node.body:
                s = _Rename(mapping).visit(copy.deepcopy(s))
                t = s.targets[0] if isinstance(s, ast.Assign) else s.target
                if isinstance(t, ast.Name):
                    phase1.append(s)
                    continue
                # a store: its loads (the value's, and the target's own for op=) first
                tmp = f"_bl{k}_v{j}_{len(phase2)}"
                value = s.value
                if isinstance(s, ast.AugAssign):
                    old = f"_bl{k}_o{j}_{len(phase2)}"
                    phase1.append(ast.Assign([ast.Name(old, store())],
                                             ast.Subscript(t.value, t.slice, load())))
                    value = ast.BinOp(ast.Name(old, load()), s.op, value)
                phase1.append(ast.Assign([ast.Name(tmp, store())], value))
                phase2.append(ast.Assign([ast.Subscript(t.value, t.slice, store())],
                                         ast.Name(tmp, load())))
        # the loop's names hold the last element's values after it, as in Python
        last = [ast.Assign([ast.Name(n, store())], ast.Name(f"_bl{k}_{n}_{WIDTH - 1}", load()))
                for n in sorted(locals_)]
        body = phase1 + phase2 + last + [
            ast.Assign([ast.Name(x, store())], ast.Name(xs[-1], load())),
            ast.AugAssign(ast.Name(i, store()), ast.Add(), lit(WIDTH))]

        def bound(n):
            v = ast.Name(n, load())
            return ast.Call(ast.Name(self.U, load()), [v], []) if unsigned else v

        out = [
            ast.Assign([ast.Name(i, store())], start),
            ast.Assign([ast.Name(e, store())], stop),
            ast.While(ast.Compare(ast.BinOp(ast.Name(i, load()), ast.Add(), lit(WIDTH)),
                                  [ast.LtE()], [ast.Name(e, load())]), body, []),
            ast.For(ast.Name(x, store()),
                    ast.Call(ast.Name("range", load()), [bound(i), bound(e)], []),
                    node.body, []),
        ]
        for n in out:
            ast.copy_location(n, node)
            for m in ast.walk(n):
                if not hasattr(m, "lineno"):
                    ast.copy_location(m, node)
        return out


def batch_loads(fdef: ast.FunctionDef) -> int:
    """Rewrite ``fdef``'s eligible loops in place; returns how many."""
    t = _BatchLoads()
    t.visit(fdef)
    return t.count
