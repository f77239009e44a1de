"""The interface the interior-point method iterates on: ``min f(w) s.t. h(w) = 0, wL <= w
<= wU`` (:class:`BarrierNLP`).  Its problems: :class:`~.nlp.SlackNLP`, a user problem with
slacks, scaling and fixed variables removed (:mod:`.nlp`, where the conventions are), and
:class:`~.restoration.RestorationNLP`, the restoration phase's problem built on another
BarrierNLP."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..arrays import amax_abs, host, scalars


class BarrierNLP(ABC):
    """Abstract; see the module doc.  ``nx`` leading entries of w are the variables whose
    Hessian block is W (L-BFGS approximates that block), the rest have zero Hessian.
    ``relaxed_equality_slacks`` (host int64 w-indices, empty unless equalities were
    relaxed) are the slacks that exist only because of that relaxation."""

    xp = np
    relaxed_equality_slacks = np.zeros(0, np.int64)
    #: True when the last 2m columns of w are an elastic pair ``(p, n)`` per row: column
    #: ``nw - 2m + i`` with the single Jacobian entry -1 in row i, ``nw - m + i`` with +1,
    #: these 2m entries last in the Jacobian's COO, no Hessian entries (the restoration
    #: phase's problem; :mod:`caspar_backend.kkt.elastic` eliminates them)
    elastic_pairs = False
    nw: int
    nx: int
    m: int
    wL: np.ndarray
    wU: np.ndarray
    jac_rows: np.ndarray
    jac_cols: np.ndarray
    hess_rows: np.ndarray
    hess_cols: np.ndarray

    def host_bounds(self) -> tuple:
        """``(wL, wU)`` as host arrays, copied from the device once per NLP: the bounds
        never change during a solve, and at 10^6 entries each copy is milliseconds."""
        hb = self.__dict__.get("_host_bounds")
        if hb is None:
            hb = self._host_bounds = (host(self.wL), host(self.wU))
        return hb

    @abstractmethod
    def f(self, w) -> float: ...

    @abstractmethod
    def grad(self, w, out): ...

    @abstractmethod
    def h(self, w, out): ...

    @abstractmethod
    def jac(self, w, out): ...

    def f_and_h(self, w, hout) -> float:
        """f(w), with h(w) into ``hout``: the two evaluations at one point (a problem
        with a map from w to its evaluator's x forms it once)."""
        f = self.f(w)
        self.h(w, hout)
        return f

    def f_unread_and_h(self, w, hout):
        """:meth:`f_and_h` with f possibly not read back: a float, or a 0-d device array
        that :meth:`read_f` turns into f once read (by default a float)."""
        return self.f_and_h(w, hout)

    def grad_and_jac(self, w, gout, jout) -> None:
        """The gradient into ``gout`` and the Jacobian values into ``jout`` at ``w`` (as
        :meth:`f_and_h`)."""
        self.grad(w, gout)
        self.jac(w, jout)

    @abstractmethod
    def hess(self, w, y, obj_factor, out): ...

    #: the objective's scaling factor (the user's f is ``f(w) / df``) and the constraint
    #: rows' (``h_i`` is the user's residual times ``dc_d[i]``; 1.0: unscaled)
    df = 1.0
    dc_d = 1.0
    #: the factors (nw,) xp that take the Lagrangian gradient to the user's space before
    #: its max-norm, times 1/df, is the unscaled dual infeasibility (user-scaling: dx on
    #: x, dc on the slacks); None: the scaled gradient's norm times 1/df
    dual_unscaling_d = None

    def describe_nonfinite(self, w) -> str:
        """Which user component produced a NaN or Inf at ``w`` ('' when unknown)."""
        return ""

    def structure(self, key, build):
        """``build()``, a structure of this problem (:mod:`caspar_backend.kkt.pattern`,
        :mod:`.structure`) that is a function of the problem's structure and of the
        hashable ``key`` alone, immutable; a problem that belongs to a compiled one takes
        it from that one's cache, where an earlier solve may have built it (the
        default: built each time)."""
        return build()

    def nlp_constr_viol(self, w, hv):
        """The constraint violation of the termination test (max-norm, scaled space), a
        0-d array; by default max |h|."""
        return amax_abs(self.xp, hv)

    def unscaled_constr_viol_term(self, w, hv):
        """The user's (unscaled) constraint violation as a 0-d array, not read back;
        None where it is the scaled one, max |h|."""
        return None

    def constr_viol_terms(self, w, hv):
        """(:meth:`nlp_constr_viol`, :meth:`unscaled_constr_viol_term`) at ``w``, not
        read back."""
        return self.nlp_constr_viol(w, hv), self.unscaled_constr_viol_term(w, hv)

    def unscaled_constr_viol(self, w, hv) -> float:
        """The user's constraint violation at ``w`` (max-norm), read back."""
        term = self.unscaled_constr_viol_term(w, hv)
        return scalars(self.xp, amax_abs(self.xp, hv) if term is None else term)[0]
