"""The general path's CPU evaluations through the compiled kernels' tape interpreter.

The compiled interior point evaluates f, g, grad f, J and the Lagrangian Hessian with one
interpreter over the model's tapes (:mod:`.kernels.tape_eval`, compiled once per
machine).  :class:`TapeEvaluator` gives the general path the same interpreter behind the
:class:`~caspar_backend.evaluators.base.Evaluator` interface: one call per evaluation
kind instead of the generated NumPy code's several array operations per pattern group
and expression node.  Measured per call against :class:`~caspar_backend.evaluators.
numpy_eval.NumpyEvaluator` (2-core VM, session 40): COPS glider (n = 499) Hessian 167
against 1,433 us, f and g 33 against 255 us; PGLib case9241_pegase (n = 85,568) Hessian
1.7 against 3.7 ms, grad f and J 2.7 against 4.2 ms.

Values: the interpreter runs the generated code's operations in the same order (sums
left to right, small integer powers as product chains, NumPy's pairwise sum of an
objective group's terms), so the results are the NumPy evaluator's bit for bit except
where NumPy's own SIMD loops for ``exp``, ``log``, ``tanh`` and non-integer powers
differ from the C library's in the last bit (docs/compiled-interior-point.md); with the
tape the general path's arithmetic is the compiled path's, so a solve handed between the
two takes one path whichever side runs an iteration.

Buffers: :class:`EvalTables` holds a problem's tapes and tables in the kernels' slot
format (:mod:`.kernels.slots`: only the evaluation slots have entries), built once per
problem; each evaluator owns a float workspace (x, p, the register file, term buffers)
copied from the tables' template, so evaluators made by :meth:`TapeEvaluator.bound` may
run in different threads at once.

Which evaluator the general path takes on the CPU (option ``cpu_evaluator``, decided by
:func:`.dispatch.general_cpu_evaluator`, which imports this module only when it asks for
:func:`tape_evaluator_for`): 'tape' where the model's expressions have tape op codes;
'auto' (default) the same where :func:`.dispatch.general_path_kernels` allows (the kernels
compiled on this machine, and loaded in this process or not its first solve: loading
them costs ~0.2 s, compiling them a minute); 'numpy' the generated NumPy code.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..evaluators.base import Evaluator
from .kernels import slots
from .tape import Unsupported, build_model, eval_float_slots, eval_int_slots
from .workspace_layout import _pack

_tables = weakref.WeakKeyDictionary()     # problem -> EvalTables | None (unsupported)
_tables_lock = threading.Lock()


class EvalTables:
    """Final.  The evaluation slots of one problem in the kernels' buffer format:
    ``Ib``/``IO`` (int64 tables and offsets, read only), ``FO`` (float offsets) and
    ``Fb0``, the float template (tape constants and data tables in place, zeros
    elsewhere).  Raises :class:`.tape.Unsupported` for an expression without an op
    code."""

    def __init__(self, problem):
        model = build_model(problem)
        ints = dict.fromkeys(slots.INT_SLOTS, 0)
        ints.update(eval_int_slots(model))
        floats = dict.fromkeys(slots.FLOAT_SLOTS, 0)
        floats.update(eval_float_slots(model, problem.n_params))
        self.Ib, self.IO = _pack(ints, slots.INT_SLOTS, np.int64)
        self.Fb0, self.FO = _pack(floats, slots.FLOAT_SLOTS, np.float64)
        self.x_slot = self._float_slice("X")
        self.p_slot = self._float_slice("P")
        self.n, self.m = model["n"], model["m"]
        self.nnz_jac, self.nnz_hess = len(model["jac_rows"]), len(model["hess_rows"])

    def _float_slice(self, name: str) -> slice:
        k = slots.FLOAT_SLOTS.index(name)
        return slice(int(self.FO[k]), int(self.FO[k + 1]))

    @staticmethod
    def of(problem):
        """The problem's tables (built on first use, then shared), or None when its
        expressions do not fit the tape."""
        with _tables_lock:
            if problem in _tables:
                return _tables[problem]
        try:
            t = EvalTables(problem)
        except Unsupported:
            t = None
        with _tables_lock:
            return _tables.setdefault(problem, t)


def _contiguous(out, size):
    """``out`` when the interpreter can write it in place (C-contiguous float64 of
    ``size``; another array type would be a new compile of the kernels), else None."""
    if (out is not None and type(out) is np.ndarray and out.dtype == np.float64
            and out.flags.c_contiguous and out.flags.writeable and out.size == size):
        return out
    return None


class TapeEvaluator(Evaluator):
    """Final.  The evaluations of ``base`` (a NumPy evaluator of the same problem, bound
    to the parameters to use) through the tape interpreter (module docstring); its
    structure, diagnostics and parameters are ``base``'s.  Besides the interface's
    methods: :meth:`obj_and_cons` and :meth:`grad_and_jac`, each one pass (the solver's
    evaluations come in these pairs)."""

    xp = np
    device = "cpu"

    def __init__(self, base, tables: EvalTables):
        from .kernels.tape_eval import ev_first, ev_hess, ev_zeroth

        self.base, self.tables = base, tables
        self.problem = base.problem
        self.n, self.m, self.n_params = base.n, base.m, base.n_params
        self.jac_rows, self.jac_cols = base.jac_rows, base.jac_cols
        self.hess_rows, self.hess_cols = base.hess_rows, base.hess_cols
        self.structure_cache = base.structure_cache
        self._zeroth, self._first, self._hess = ev_zeroth, ev_first, ev_hess
        self._Fb = tables.Fb0.copy()
        self._x = self._Fb[tables.x_slot]
        self._p = self._Fb[tables.p_slot]
        self._p[:] = base.parameters()
        # scratch for the half of a pair a caller did not ask for
        self._g = np.zeros(self.m)
        self._grad = np.zeros(self.n)
        self._jv = np.zeros(tables.nnz_jac)
        self._hv = np.zeros(tables.nnz_hess)
        self._lam = np.zeros(self.m)

    @property
    def p(self):
        return self.base.p

    # ------------------------------------------------------------------ params
    def set_params(self, p) -> None:
        self.base.set_params(p)
        self._p[:] = self.base.parameters()

    def bound(self, p) -> "TapeEvaluator":
        """A new evaluator for parameters ``p`` with a workspace of its own (the tables
        and ``base``'s compiled parts shared)."""
        return TapeEvaluator(self.base.bound(p), self.tables)

    def _bind(self, p, x) -> None:
        if p is not None:
            self.set_params(p)
        self._x[:] = x

    # ------------------------------------------------------------- evaluation
    def obj_and_cons(self, x, gout, p=None) -> float:
        """``f(x)``, with ``g(x)`` into ``gout`` (m,), in one pass."""
        self._bind(p, x)
        g = _contiguous(gout, self.m)
        f = self._zeroth(self._Fb, self.tables.FO, self.tables.Ib, self.tables.IO,
                         self._g if g is None else g)
        if g is None:
            gout[...] = self._g
        return float(f)

    def grad_and_jac(self, x, gout, jout, p=None) -> None:
        """``grad f(x)`` into ``gout`` (n,) and the Jacobian values into ``jout``
        (nnz_jac,), in one pass."""
        self._bind(p, x)
        g, j = _contiguous(gout, self.n), _contiguous(jout, self.tables.nnz_jac)
        self._first(self._Fb, self.tables.FO, self.tables.Ib, self.tables.IO,
                    self._grad if g is None else g, self._jv if j is None else j)
        if g is None:
            gout[...] = self._grad
        if j is None:
            jout[...] = self._jv

    def obj(self, x, p=None) -> float:
        return self.obj_and_cons(x, self._g, p)

    def cons(self, x, out=None, p=None):
        out = np.empty(self.m) if out is None else out
        self.obj_and_cons(x, out, p)
        return out

    def grad(self, x, out=None, p=None):
        out = np.empty(self.n) if out is None else out
        self.grad_and_jac(x, out, self._jv, p)
        return out

    def jac_values(self, x, out=None, p=None):
        out = np.empty(self.tables.nnz_jac) if out is None else out
        self.grad_and_jac(x, self._grad, out, p)
        return out

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        self._bind(p, x)
        out = np.empty(self.tables.nnz_hess) if out is None else out
        lam_c = _contiguous(lam, self.m)
        if lam_c is None:
            self._lam[:] = lam
            lam_c = self._lam
        h = _contiguous(out, self.tables.nnz_hess)
        self._hess(self._Fb, self.tables.FO, self.tables.Ib, self.tables.IO, lam_c,
                   float(obj_factor), self._hv if h is None else h)
        if h is None:
            out[...] = self._hv
        return out

    # ------------------------------------------------------------- diagnostics
    def describe_nonfinite(self, x) -> str:
        return self.base.describe_nonfinite(x)


def tape_evaluator_for(ev):
    """A :class:`TapeEvaluator` over ``ev`` where the model allows, else ``ev`` itself:
    only a plain NumPy evaluator of a compiled problem whose expressions all have tape op
    codes is replaced (not a composed one with host functions, a given Hessian or a
    batch's).  Whether the general path asks is :func:`.dispatch.general_cpu_evaluator`'s
    decision (module docstring)."""
    from ..evaluators.numpy_eval import NumpyEvaluator

    if type(ev) is not NumpyEvaluator:
        return ev
    tables = EvalTables.of(ev.problem)
    if tables is None:
        return ev
    return TapeEvaluator(ev, tables)
