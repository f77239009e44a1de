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
straight-line assignments (``name = e``, ``name op= e``, ``arr[i] = e``, ``arr[i] op= e``)
where each array the body stores into is loaded and stored at one index expression only,
no load sits under a conditional expression or a boolean operator (a hoisted load must be
one the loop makes anyway), and the only calls are to the pure functions of :data:`PURE`::

    for x in range(a, b):             _bl_i = a;  _bl_e = b
        body                          while _bl_i + 4 <= _bl_e:
                                          x0, x1, x2, x3 = _bl_i, _bl_i + 1, ...
                                          (the body's leading pure assignments and the
                                           scatter indices t0..t3, copies 0..3)
                                          if t0..t3 all differ (per scattered array):
                                              (copies 0..3: every scalar assignment and
                                               every load, in order)
                                              (copies 0..3: the stores, in order)
                                          else:
                                              (copies 0..3 of the body, one after another)
                                          x = x3;  the body's names = copy 3's;  _bl_i += 4
                                      for x in range(_bl_i, _bl_e):
                                          body

An array stored at ``x`` needs no test (four elements, four entries); one stored at
another index -- a scatter ``arr[idx[x]] += v`` -- is grouped only when the group's four
targets differ, its index computed from arrays the body does not write and from names the
leading pure assignments set once.  Each copy's names are its own (a scalar carried from
one element to the next -- a sum -- keeps its name, so its updates stay in element order;
a store may not read a carried scalar).  Every element gets the same operations in the
same order, so the results are the same bits as the loop's; arrays passed twice under two
names are the one thing the rule cannot see, which is why the rewritten kernels are
checked against the CPU's on the bank (tests/compiled/test_cuda_batched_loads.py).
"""
from __future__ import annotations

import ast
import copy
import os

#: calls a body may make: no memory effects (``_f``, ``_i``: the slot accessors, views)
PURE = frozenset({"U", "_f", "_i", "abs", "min", "max", "float", "int", "nmin", "nmax",
                  "sqrt", "exp", "log", "isfinite", "isnan", "isinf", "fabs", "floor",
                  "ceil"})
#: elements per batch
WIDTH = 4


def enabled() -> bool:
    """Whether the CUDA build batches loads (``CASPAR_CUDA_BATCHED_LOADS=1``)."""
    return os.environ.get("CASPAR_CUDA_BATCHED_LOADS", "0") == "1"


def _is_x(node, x: str) -> bool:
    return isinstance(node, ast.Name) and node.id == x


def _target(s):
    return s.targets[0] if isinstance(s, ast.Assign) else s.target


def _names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _subscripts(node):
    """The subscripts ``arr[...]`` in ``node`` (loads and stores)."""
    return [n for n in ast.walk(node) if isinstance(n, ast.Subscript)]


def _clean(expr) -> bool:
    """Only pure calls, no load under IfExp/BoolOp, plain ``name[...]`` subscripts."""
    for n in ast.walk(expr):
        if isinstance(n, (ast.IfExp, ast.BoolOp)):
            if _subscripts(n):
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
        elif isinstance(n, (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield)):
            return False
    return True


class _Plan:
    """Final.  What the rewrite needs of an eligible loop: its bounds, loop variable,
    carried scalars, the written arrays' one index expression each (``index``, as an
    AST), those not at ``x`` (``scatter``: a runtime test that the group's four targets
    differ), and the body's prefix of pure local assignments (``prefix``: statements
    evaluated first, the scatter indices may use their names)."""

    def __init__(self, start, stop, x, carried, index, scatter, prefix):
        self.start, self.stop, self.x, self.carried = start, stop, x, carried
        self.index, self.scatter, self.prefix = index, scatter, prefix


def _eligible(node: ast.For):
    """The :class:`_Plan` of a loop the rewrite applies to, else None."""
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
    body = node.body
    written, assigned_count = set(), {}
    for s in body:
        if isinstance(s, ast.Assign):
            if len(s.targets) != 1:
                return None
        elif not isinstance(s, ast.AugAssign):
            return None
        t = _target(s)
        if isinstance(t, ast.Subscript):
            if not isinstance(t.value, ast.Name):
                return None
            written.add(t.value.id)
        elif isinstance(t, ast.Name):
            if t.id == x:
                return None
            assigned_count[t.id] = assigned_count.get(t.id, 0) + 1
        else:
            return None
        if not _clean(s.value) or not _clean(t):
            return None
    if not written or not any(isinstance(n.ctx, ast.Load) for s in body
                              for n in _subscripts(s)):
        return None                     # (a reduction, or stores only: nothing to gain)
    # a scalar assigned in the body and read before its assignment is carried from one
    # element to the next: its updates stay in element order; a store may not read it
    seen, carried = set(), set()
    for s in body:
        reads = _names(s.value) | (_names(_target(s)) - {_target(s).id}
                                   if isinstance(_target(s), ast.Name) else _names(_target(s)))
        if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name):
            reads.add(s.target.id)
        carried |= {r for r in reads if r not in seen and r in assigned_count}
        if isinstance(_target(s), ast.Name):
            seen.add(_target(s).id)
    # every access of a written array at one index expression
    index = {}
    for s in body:
        for n in _subscripts(s):
            if n.value.id in written:
                d = ast.dump(n.slice)
                if index.setdefault(n.value.id, (d, n.slice))[0] != d:
                    return None
                if _names(n.slice) & carried:
                    return None
                if any(m.value.id in written for m in _subscripts(n.slice)):
                    return None
    for s in body:
        if isinstance(_target(s), ast.Subscript) and _names(s.value) & carried:
            return None
    # an array is loaded only before it is stored (the loads all go first)
    stored = set()
    for s in body:
        t = _target(s)
        loaded = {n.value.id for n in _subscripts(s.value)}
        if isinstance(t, ast.Subscript):
            loaded |= {n.value.id for n in _subscripts(t.slice)}
            if isinstance(s, ast.AugAssign):
                loaded.add(t.value.id)
        if loaded & stored:
            return None
        if isinstance(t, ast.Subscript):
            stored.add(t.value.id)
    # the prefix: leading assignments of locals from arrays not written, no carried names
    prefix = 0
    for s in body:
        t = _target(s)
        if not (isinstance(t, ast.Name) and t.id not in carried
                and not (_names(s.value) & carried)
                and not any(m.value.id in written for m in _subscripts(s.value))):
            break
        prefix += 1
    prefix_names = {_target(s).id for s in body[:prefix]}
    scatter = set()
    for arr, (d, sl) in index.items():
        if _is_x(sl, x):
            continue
        for name in _names(sl) - {x}:
            # loop-invariant, or assigned once, in the prefix
            if name in assigned_count and not (name in prefix_names
                                               and assigned_count[name] == 1):
                return None
        scatter.add(arr)
    return _Plan(start, stop, x, carried, {a: sl for a, (d, sl) in index.items()}, scatter,
                 prefix)


class _Rename(ast.NodeTransformer):
    """Final.  Renames Name nodes by a mapping and replaces the slices of the scattered
    arrays' subscripts by their per-copy index names."""

    def __init__(self, mapping: dict, slices: dict | None = None):
        self.mapping = mapping
        self.slices = slices or {}

    def visit_Name(self, node):
        if node.id in self.mapping:
            return ast.copy_location(ast.Name(self.mapping[node.id], node.ctx), node)
        return node

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in self.slices:
            return ast.copy_location(ast.Subscript(
                ast.Name(node.value.id, ast.Load()),
                ast.Name(self.slices[node.value.id], ast.Load()), node.ctx), node)
        self.generic_visit(node)
        return node


def _distinct(names: list):
    """``a != b and ...`` over every pair of ``names``."""
    tests = [ast.Compare(ast.Name(a, ast.Load()), [ast.NotEq()], [ast.Name(b, ast.Load())])
             for i, a in enumerate(names) for b in names[i + 1:]]
    return ast.BoolOp(ast.And(), tests)


class _BatchLoads(ast.NodeTransformer):
    """Final.  The rewrite of the module docstring; ``count`` loops rewritten."""

    def __init__(self, unsigned_name: str = "U"):
        self.count = 0
        self.U = unsigned_name

    def visit_For(self, node):
        self.generic_visit(node)
        plan = _eligible(node)
        if plan is None:
            return node
        x, carried = plan.x, plan.carried
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
        locals_ = {_target(s).id for s in node.body
                   if isinstance(_target(s), ast.Name)} - carried
        first, phase1, phase2, serial, xs, targets = [], [], [], [], [], {}
        for j in range(WIDTH):
            xj = f"_bl{k}_x{j}"
            xs.append(xj)
            first.append(ast.Assign([ast.Name(xj, store())],
                                    ast.BinOp(ast.Name(i, load()), ast.Add(), lit(j))
                                    if j else ast.Name(i, load())))
            mapping = {x: xj, **{n: f"_bl{k}_{n}_{j}" for n in locals_}}
            for s in node.body[:plan.prefix]:
                first.append(_Rename(mapping).visit(copy.deepcopy(s)))
            slices = {}
            for arr in sorted(plan.scatter):
                name = f"_bl{k}_t_{arr}_{j}"
                slices[arr] = name
                targets.setdefault(arr, []).append(name)
                first.append(ast.Assign([ast.Name(name, store())],
                                        _Rename(mapping).visit(copy.deepcopy(plan.index[arr]))))
            for s in node.body[plan.prefix:]:
                s = _Rename(mapping, slices).visit(copy.deepcopy(s))
                serial.append(copy.deepcopy(s))
                t = _target(s)
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
        if plan.scatter:                # four distinct targets per array, else in order
            test = ast.BoolOp(ast.And(), [_distinct(targets[a]) for a in sorted(targets)]) \
                if len(targets) > 1 else _distinct(targets[next(iter(targets))])
            grouped = [ast.If(test, phase1 + phase2, serial)]
        else:
            grouped = phase1 + phase2
        # the loop's names hold the last element's values after it, as in Python
        last = [ast.Assign([ast.Name(n, store())],
                           ast.Name(f"_bl{k}_{n}_{WIDTH - 1}", load()))
                for n in sorted(locals_)]
        body = first + grouped + last + [
            ast.Assign([ast.Name(x, store())], ast.Name(xs[-1], load())),
            ast.AugAssign(ast.Name(i, store()), ast.Add(), lit(WIDTH))]

        def bound(n):
            v = ast.Name(n, load())
            return ast.Call(ast.Name(self.U, load()), [v], []) if unsigned else v

        out = [
            ast.Assign([ast.Name(i, store())], plan.start),
            ast.Assign([ast.Name(e, store())], plan.stop),
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
