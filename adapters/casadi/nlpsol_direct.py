"""Numeric one-instance calls of ``nlpsol(..., 'caspar', ...)`` without casadi's call
machinery: the inputs read into float64 vectors here, the solve called directly, the
outputs built as the DMs casadi's evaluation returns.

casadi's own path (``casadi.Function.call`` of the MX wrapper, which calls
:class:`~.nlpsol_function.SolverCallback`'s ``eval``) converts every argument to a DM,
evaluates the wrapper, converts the DMs to vectors for the solve and the solution back
to DMs: most of a small solve's time.  :class:`DirectCalls` takes that path's place
only where the outcome is the same by construction:

* every argument is a plain numeric value that casadi converts without loss -- a Python
  or NumPy real scalar, a flat list or tuple of them, a real NumPy array of at most two
  dimensions, a dense DM -- and its shape is the input's, its transpose (vectors), or
  1x1 (broadcast): the shapes casadi accepts without reshaping, projecting or
  repeating (anything else -- symbolic, sparse, empty, several columns, a wrong size --
  goes through casadi, which evaluates, expands or reports it);
* the solve cannot raise through casadi (which would wrap the error in its own
  RuntimeError): no ``error_on_fail``, no ``iteration_callback``, no user derivative
  Functions to compare (:class:`~.frontend.NlpsolCore` decides, its
  ``direct_calls``).

Inputs: the values of casadi's nlpsol inputs (:data:`~.nlpsol_io.NLPSOL_IN`) as a dict
(missing names take :data:`~.nlpsol_io.DEFAULT_IN`) or a list of all eight; read as
float64 vectors of the input's nonzeros (column-major, the input sparsity being dense).
Outputs: DMs of the output sparsities, in a dict ordered as casadi orders one (by name)
or a list in :data:`~.nlpsol_io.NLPSOL_OUT` order, as ``casadi.Function.call``.
"""

from __future__ import annotations

from typing import final

import numpy as np

import casadi as ca

from .nlpsol_io import DEFAULT_IN, NLPSOL_IN, NLPSOL_OUT

#: element types of a list or tuple argument read here (casadi reads them as numbers)
_LIST_ITEMS = frozenset((float, int, bool, np.float64, np.int64))
#: NumPy dtype kinds casadi converts to float64 exactly (bool, int, uint, float)
_REAL_KINDS = frozenset("biuf")
#: the order of the keys of the dict casadi's call returns
_DICT_ORDER = tuple(sorted(NLPSOL_OUT))


def numeric_value(v) -> tuple[int, int, np.ndarray] | None:
    """``(rows, cols, values)`` of a plain numeric call argument (module doc), ``values``
    its entries as float64 in column-major order; None for anything else."""
    if type(v) in _LIST_ITEMS or (isinstance(v, np.generic) and v.dtype.kind in _REAL_KINDS):
        return 1, 1, np.array((float(v),))
    if isinstance(v, (list, tuple)):
        if not all(type(e) in _LIST_ITEMS for e in v):
            return None
        return len(v), 1, np.array(v, dtype=float)
    if isinstance(v, np.ndarray):
        if v.ndim > 2 or v.dtype.kind not in _REAL_KINDS:
            return None
        rows, cols = (v.shape + (1, 1))[:2]
        return rows, cols, np.array(v, dtype=float).ravel(order="F")
    if isinstance(v, ca.DM) and v.is_dense():
        return v.size1(), v.size2(), np.array(v.nonzeros(), dtype=float)
    return None


@final
class DirectCalls:
    """The direct path of one solver's calls (final); ``sparsity_in`` /
    ``sparsity_out``: the solver's input and output sparsities (the inputs dense)."""

    def __init__(self, sparsity_in: list, sparsity_out: list):
        #: per input: (shape, transposed shape or None, number of nonzeros)
        self._inputs = []
        for sp in sparsity_in:
            r, c = sp.size1(), sp.size2()
            self._inputs.append(((r, c), (c, r) if r == 1 or c == 1 else None, sp.nnz()))
        self._sp_out = list(sparsity_out)
        # the outputs that are dense columns are cut from one DM (one conversion of
        # the values instead of one per output); the others are built one by one
        self._column = [sp.is_dense() and sp.size2() == 1 and sp.size1() > 0
                        for sp in sparsity_out]
        offsets = [0]
        for sp, col in zip(sparsity_out, self._column):
            if col:
                offsets.append(offsets[-1] + sp.nnz())
        self._offsets = offsets

    def inputs(self, arg) -> list[np.ndarray] | None:
        """The eight inputs of a call (a dict or a list) as float64 vectors of their
        nonzeros, or None when the call is not for this path (module doc)."""
        if isinstance(arg, dict):
            if not all(k in NLPSOL_IN for k in arg):
                return None
            values = [arg.get(k, d) for k, d in zip(NLPSOL_IN, DEFAULT_IN)]
        elif isinstance(arg, (list, tuple)) and len(arg) == len(NLPSOL_IN):
            values = arg
        else:
            return None
        out = []
        for v, (shape, transposed, nnz) in zip(values, self._inputs):
            try:
                got = numeric_value(v)
            except OverflowError:       # an int beyond float64: casadi reports it
                return None
            if got is None:
                return None
            r, c, a = got
            if (r, c) == shape or (r, c) == transposed:
                out.append(a)
            elif r == 1 and c == 1:
                out.append(np.full(nnz, a[0]))
            else:
                return None
        return out

    def outputs(self, out: dict, as_dict: bool):
        """The solve's outputs (``out``: vectors of the nonzeros, ``f`` a float) as DMs:
        a dict in casadi's key order, or a list in NLPSOL_OUT order."""
        parts = [np.atleast_1d(out[k]) for k in NLPSOL_OUT]
        cols = [a for a, col in zip(parts, self._column) if col]
        # (a 2-D column converts faster than a 1-D array)
        cut = iter(ca.vertsplit(ca.DM(np.concatenate(cols).reshape(-1, 1)), self._offsets)
                   if cols else ())
        dms = [next(cut) if col else ca.DM(sp, a)
               for a, sp, col in zip(parts, self._sp_out, self._column)]
        if not as_dict:
            return dms
        by_name = dict(zip(NLPSOL_OUT, dms))
        return {k: by_name[k] for k in _DICT_ORDER}
