"""The CuPy kernels a GPU solve asks for, read off the emulated device path.

CuPy compiles one kernel per operation and type signature on its first use on a machine
(then keeps it in its disk cache); ``caspar warmup`` solves check problems on the GPU so
that a user's first solve compiles none.  :func:`kernel_signatures` runs a solve on the
device code path with NumPy arrays posing as device memory (``tests/solver/
test_gpu_solver.py``'s emulation) and records, per CuPy-level operation, a signature:

* ``('ufunc', name, method, operand kinds)`` -- a ufunc call (elementwise, or a
  reduction for ``reduce``);
* ``('func', name, array dtypes)`` -- an array function (``where``, ``max``, ...);
* ``('take', dtype, index dtypes)`` / ``('put', dtype, index kinds, value kind)`` --
  indexing with arrays (gather / scatter kernels), ``('copy', dtype)``,
  ``('astype', from, to)``, ``('fill', dtype, zero?)``.

An operand kind is its dtype character, with ``0`` appended for a 0-d array (CuPy's
kernels differ by rank), or ``py-float`` / ``py-int`` / ``py-bool`` for a Python or
NumPy scalar.  The fused operations and hand-written kernels are not recorded: they are
one module, compiled whole at its first use.
"""

from __future__ import annotations

import numpy as np


def _kind(a) -> str:
    if isinstance(a, np.ndarray):
        return a.dtype.char + ("0" if a.ndim == 0 else "")
    if isinstance(a, (bool, np.bool_)):
        return "py-bool"
    if isinstance(a, (int, np.integer)):
        return "py-int"
    if isinstance(a, (float, np.floating)):
        return "py-float"
    return type(a).__name__


def kernel_signatures(problem, monkeypatch, x0=None, **options) -> set:
    """The signatures (module doc) of ``problem``'s emulated device solve from ``x0``
    (default: the problem's) with ``options``; raises unless it ends Solve_Succeeded."""
    from caspar_backend.solver import solve_nlp
    from tests.solver import test_gpu_solver as T

    D = T._DevArray
    ufunc, func = D.__array_ufunc__, D.__array_function__
    getitem, setitem = D.__getitem__, D.__setitem__
    astype, fill, copy = np.ndarray.astype, np.ndarray.fill, np.ndarray.copy
    seen = set()

    def on_ufunc(self, uf, method, *a, **k):
        seen.add(("ufunc", uf.__name__, method, tuple(_kind(x) for x in a)))
        return ufunc(self, uf, method, *a, **k)

    def on_func(self, fn, types_, a, k):
        seen.add(("func", fn.__name__, tuple(_kind(x) for x in a if isinstance(x, np.ndarray))))
        return func(self, fn, types_, a, k)

    def on_getitem(self, key):
        ks = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, np.ndarray) and k.ndim for k in ks):
            seen.add(("take", _kind(self), tuple(_kind(k) for k in ks)))
        return getitem(self, key)

    def on_setitem(self, key, value):
        ks = key if isinstance(key, tuple) else (key,)
        seen.add(("put", _kind(self), tuple(_kind(k) if isinstance(k, np.ndarray)
                                            else type(k).__name__ for k in ks),
                  _kind(value)))
        return setitem(self, key, value)

    def on_astype(self, dtype, *a, **k):
        if isinstance(self, D):
            seen.add(("astype", _kind(self), np.dtype(dtype).char))
        return astype(self, dtype, *a, **k)

    def on_fill(self, v):
        if isinstance(self, D):
            seen.add(("fill", _kind(self), v == 0))
        return fill(self, v)

    def on_copy(self, *a, **k):
        if isinstance(self, D):
            seen.add(("copy", _kind(self)))
        return copy(self, *a, **k)

    for name, f in (("__array_ufunc__", on_ufunc), ("__array_function__", on_func),
                    ("__getitem__", on_getitem), ("__setitem__", on_setitem),
                    ("astype", on_astype), ("fill", on_fill), ("copy", on_copy)):
        monkeypatch.setattr(D, name, f)
    try:
        xp = T._emulate_device(monkeypatch)
        ev = T._EmulatedEvaluator(problem.evaluator("cpu"), xp)
        x0 = problem.x0 if x0 is None else np.asarray(x0, float)
        r = solve_nlp(ev, problem.lbx, problem.ubx, problem.lbg, problem.ubg, x0,
                      options=dict(print_level=0, **options))
    finally:
        monkeypatch.undo()
    if r.status != "Solve_Succeeded":
        raise AssertionError(f"{r.status}: {r.message}")
    return seen
