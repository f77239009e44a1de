"""The CUDA build's loops: every ``for x in range(...)`` of a kernel compiled as a while
loop over a counter.

Why: numba-cuda lowers ``range`` to Numba's iterator (a count of trips left, decremented
through selects at every trip), and NVVM keeps that form, so each trip of every loop
paid about eight 64-bit integer instructions beside its body (the H200's SASS of the
batch kernel, session 33: of its executed instructions 85 % were integer -- IADD3, LEA,
SEL, ISETP, SHF --, 2.5 % floating point).  A while loop over a counter is the induction
variable NVVM's loop passes recognise: the factorization's and the solves' inner loops
then index with constant offsets from one address per unrolled group.  On the CPU, LLVM
simplifies Numba's iterator itself, so the CPU kernels keep their ``for`` loops.

The rewrite, for a loop whose target is a name, with no ``else`` and a step that is a
literal integer (``range(b)``, ``range(a, b)``, ``range(a, b, s)``) or, in an unsigned
loop (below), ``U(expr)`` -- positive: a team's stride, :mod:`..kernels.team`::

    for x in range(a, b, s):          _i = a
        body                          _e = b
                                      while _i < _e:          (_i > _e when s < 0)
                                          x = _i
                                          _i += s
                                          body

``a`` and ``b`` are evaluated once, in this order, as ``range`` does; the counter moves
before the body, so ``continue`` and ``break`` keep Python's meaning, an assignment to
``x`` in the body does not change the trips, and after the loop ``x`` is the last value
taken (unset if there was no trip), as in Python.  Types: Numba's range yields uint64
when all its arguments are unsigned and int64 otherwise; the rewrite makes the counter
unsigned where every argument that is not a literal is a call of ``U`` (the kernels'
spelling of an unsigned index, :data:`..kernels._jit.U`), its literals then ``U(...)``
too, and leaves loops with an unsigned argument and a negative step as ``for`` loops.

:func:`while_code` gives the rewritten function's code; :mod:`.retarget` builds the
CUDA versions of the kernels from it.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from types import CodeType, FunctionType

#: the name of the unsigned-index cast in the kernels' modules
UNSIGNED = "U"


def _literal_int(node) -> int | None:
    """The value of an integer literal ``3`` or ``-3``, else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _literal_int(node.operand)
        return None if v is None else -v
    return None


def _is_unsigned(node) -> bool:
    """Whether ``node`` is a call ``U(expr)`` (:data:`UNSIGNED`)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
        node.func.id == UNSIGNED and len(node.args) == 1 and not node.keywords


class _RangeToWhile(ast.NodeTransformer):
    """Final.  Rewrites a function's ``for``-``range`` loops, innermost first (module
    docstring); ``count`` is the number rewritten, which also numbers their counters
    ``_loop<k>_i`` and ``_loop<k>_end``."""

    def __init__(self):
        self.count = 0

    def visit_For(self, node):
        self.generic_visit(node)
        it = node.iter
        if node.orelse or not isinstance(node.target, ast.Name) or \
                not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
                     and it.func.id == "range" and not it.keywords
                     and 1 <= len(it.args) <= 3):
            return node
        args = list(it.args)
        start, stop = (ast.Constant(0), args[0]) if len(args) == 1 else args[:2]
        given = [a for a in args if _literal_int(a) is None]
        unsigned = bool(given) and all(_is_unsigned(a) for a in given)
        step = 1 if len(args) < 3 else _literal_int(args[2])
        if step is None and unsigned:           # U(s): a step > 0 (0: range's error)
            step = args[2]
        elif step is None or step == 0 or (unsigned and step < 0):
            return node
        ascending = not isinstance(step, int) or step > 0

        def lit(v):
            c = ast.Constant(v)
            return ast.Call(ast.Name(UNSIGNED, ast.Load()), [c], []) if unsigned else c

        if unsigned and _literal_int(start) is not None:
            start = lit(_literal_int(start))
        k = self.count
        self.count += 1
        i, e = f"_loop{k}_i", f"_loop{k}_end"
        name = lambda n, ctx: ast.Name(n, ctx())     # noqa: E731
        out = [
            ast.Assign([name(i, ast.Store)], start),
            ast.Assign([name(e, ast.Store)], stop),
        ]
        if not isinstance(step, int):            # evaluated once, after the bounds
            out.append(ast.Assign([name(f"_loop{k}_step", ast.Store)], step))
            step = name(f"_loop{k}_step", ast.Load)
        out += [
            ast.While(
                ast.Compare(name(i, ast.Load), [ast.Lt() if ascending else ast.Gt()],
                            [name(e, ast.Load)]),
                [ast.Assign([name(node.target.id, ast.Store)], name(i, ast.Load)),
                 ast.AugAssign(name(i, ast.Store), ast.Add(),
                               step if not isinstance(step, int) else
                               lit(step) if step > 0 else ast.Constant(step)),
                 *node.body],
                []),
        ]
        for n in out:
            ast.copy_location(n, node)
        return out


def while_code(py_func: FunctionType) -> CodeType:
    """The code of ``py_func`` with its ``for``-``range`` loops rewritten (module
    docstring), compiled against the kernel's file and line numbers so that numba-cuda's
    line information points into it; ``py_func.__code__`` itself where there is no such
    loop or no source to read."""
    try:
        lines, first = inspect.getsourcelines(py_func)
    except (OSError, TypeError):
        return py_func.__code__
    tree = ast.parse(textwrap.dedent("".join(lines)))
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        return py_func.__code__
    fdef.decorator_list = []
    rewrite = _RangeToWhile()
    rewrite.visit(fdef)
    if rewrite.count == 0:
        return py_func.__code__
    ast.fix_missing_locations(tree)
    ast.increment_lineno(tree, first - 1)
    # the def where the CPU code starts (its first decorator's line: the cache's key),
    # every other line its own, so the code's line table (kept relative to the first
    # line) points at the kernel's source
    fdef.lineno = py_func.__code__.co_firstlineno
    namespace: dict = {}
    exec(compile(tree, py_func.__code__.co_filename, "exec"), dict(py_func.__globals__),
         namespace)
    return namespace[py_func.__name__].__code__
