"""The CUDA build's loop rewrite (caspar_backend/compiled/cuda/loops.py): a for-range
loop and its while form compute the same, in Python and compiled by Numba, with
``break``, ``continue``, descending and unsigned ranges, nested loops, an assignment to
the target in the body, and the target's value after the loop; which loops are kept."""
import ast
import dis
import inspect
import textwrap
from types import FunctionType

import numpy as np
import pytest

from caspar_backend.compiled.cuda.loops import while_code

U = np.uint64


def ascending(a, n):
    s = 0.0
    for i in range(n):
        s = s * 1.5 + a[i]
    for i in range(2, n):
        if a[i] < 0:
            continue
        s += i * a[i]
    return s, i


def descending(a, n):
    s = 0.0
    last = -7
    for i in range(n - 1, -1, -1):
        s = s * 0.5 + a[i]
        last = i
    for j in range(n, 0, -2):
        s += a[j - 1]
    return s, last


def breaks(a, n):
    k = -1
    for i in range(1, n):
        if a[i] > 2.0:
            k = i
            break
    return k, i


def unsigned(a, p):
    s = 0.0
    for q in range(p.shape[0] - 1):
        for j in range(U(p[q]), U(p[q + 1])):
            s += a[j] * (q + 1)
    for c in range(U(3)):
        s += a[c]
    return s


def strided(a, n, lanes):
    """A team's share, lane by lane (kernels/team.py): an unsigned step that is not a
    literal, evaluated once."""
    s = 0.0
    for lane in range(lanes):
        k = U(lanes)
        for i in range(U(lane), U(n), U(k)):
            s = s * 0.5 + a[i] * (lane + 1)
            k = U(1)                              # the step was taken already
    return s


def target_assigned(n):
    s = 0
    for i in range(n):
        s += i
        i = 100
    return s, i


def empty_range(n):
    i = 42
    for i in range(n, n):
        pass
    return i


def kept(a, n):
    s = 0.0
    for i in range(0, n, 3 if n > 2 else 1):       # a step that is not a literal
        s += a[i]
    for x in a[:2]:                               # not a range
        s += x
    for i in range(n):
        s += 1.0
    else:
        s += 2.0
    for j in range(U(n), U(0), -1):               # unsigned and descending
        s += a[j - 1]
    for i in range(2):                            # the one rewritten
        s += a[i]
    return s


def _rewritten(fn):
    return FunctionType(while_code(fn), fn.__globals__, fn.__name__)


A = np.array([0.5, -1.0, 3.0, 2.5, -0.25, 4.0, 1.0])
P = np.array([0, 2, 2, 5, 7], dtype=np.int64)
CASES = [(ascending, (A, 7)), (ascending, (A, 1)), (descending, (A, 7)),
         (descending, (A, 0)), (breaks, (A, 7)), (breaks, (A, 2)), (unsigned, (A, P)),
         (strided, (A, 7, 3)), (strided, (A, 7, 1)), (strided, (A, 2, 4)),
         (target_assigned, (5,)), (empty_range, (3,)), (kept, (A, 7))]


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_while_form_computes_what_the_for_form_does(fn, args):
    w = _rewritten(fn)
    assert w.__code__ is not fn.__code__
    assert w(*args) == fn(*args)
    numba = pytest.importorskip("numba")
    assert numba.njit(w)(*args) == numba.njit(fn)(*args)


def test_range_loops_are_rewritten_and_the_others_kept():
    def loops(fn):
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        return sum(isinstance(n, ast.For) for n in ast.walk(tree)), \
            sum(isinstance(n, ast.While) for n in ast.walk(tree))

    def for_iters(code):
        return [i.opname for i in dis.get_instructions(code)].count("FOR_ITER")

    assert loops(kept) == (5, 0)
    assert for_iters(kept.__code__) == 5
    assert for_iters(while_code(kept)) == 4          # the last loop only is rewritten
    assert for_iters(while_code(unsigned)) == 0
    assert for_iters(while_code(strided)) == 0         # the U(k) step's loop too


def test_unsigned_ranges_keep_an_unsigned_counter():
    numba = pytest.importorskip("numba")

    def last_index(p):
        j = U(0)
        for j in range(U(p[0]), U(p[1])):
            pass
        return j

    w = numba.njit(_rewritten(last_index))
    assert w(P[2:4]) == 4
    assert str(w.nopython_signatures[0].return_type) == "uint64"


def test_every_kernel_rewrites_and_keeps_its_line_numbers():
    from caspar_backend.compiled.cuda import retarget

    for mod in retarget._kernel_modules():
        for v in vars(mod).values():
            if retarget._is_kernel(v) and v.py_func.__module__ == mod.__name__:
                code = while_code(v.py_func)
                assert code.co_firstlineno == v.py_func.__code__.co_firstlineno
                # every statement on its own line (line info, errors): the loops' new
                # statements take the line of their `for`, nothing else moves
                lines = {ln for *_, ln in code.co_lines() if ln}
                assert lines == {ln for *_, ln in v.py_func.__code__.co_lines() if ln}, \
                    v.py_func.__qualname__
                assert code.co_filename == v.py_func.__code__.co_filename
                assert code.co_varnames[:code.co_argcount] == \
                    v.py_func.__code__.co_varnames[:v.py_func.__code__.co_argcount]
