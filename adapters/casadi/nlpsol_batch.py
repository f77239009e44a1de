"""The casadi side of batched solves: B instances of the nlpsol problem in one
:meth:`Problem.solve_batch <caspar_backend.problem.Problem.solve_batch>` call.

casadi evaluates a Function on B instances in two ways, and caspar's nlpsol Function
(:class:`~.nlpsol_function.NlpsolFunction`) takes both to one batched solve:

* **a call with B columns** (casadi's "npar" rule): an argument of an (r, c) input may
  have c*P columns; the Function is then evaluated P times, on column blocks, an
  argument with fewer blocks being repeated horizontally (its block count must divide
  P, and each such argument must have a multiple of the blocks of the arguments before
  it, in input order; else casadi raises "... P must be a multiple of ...");
* **S.map(B)** (and ``map(B, 'serial' | 'thread' | 'openmp' | 'unroll' | 'inline'[,
  k])``, ``map(name, parallelization, B, reduce_in, reduce_out)``,
  ``map(B, reduce_in, reduce_out)``): a Function whose inputs and outputs are widened to
  B instances (:mod:`.nlpsol_io`); a "reduced" input is shared, a reduced output is the
  sum over the instances.

Here: :class:`BatchCallback`, the casadi node that solves its ``size`` instances in one
batched solve (so a mapped Function stays one node of casadi graphs, numeric and
symbolic), :class:`MapStats`, the statistics of a mapped Function, and
:func:`map_request`, which reads casadi's ``map`` arguments.  The parallelization and
thread count are accepted and not used: the batch is one vectorized solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, final

import casadi as ca

from .nlpsol_io import NlpsolSignature
from .nlpsol_io import NLPSOL_OUT, columns_of, rows_of, widened
from .nlpsol_serial import KEY, node_record
from .nlpsol_stats import LastStats

if TYPE_CHECKING:
    from .frontend import NlpsolCore

#: casadi's Map parallelizations (map.cpp); any other raises there
PARALLELIZATIONS = ("serial", "openmp", "thread", "unroll", "inline")


@final
class MapStats:
    """The statistics of a mapped Function's last numeric evaluation (final): casadi's
    Map keeps none (its ``stats()`` is ``{}``), caspar keeps the batch's
    (:func:`~.nlpsol_stats.batch_stats`); ``{}`` before the first evaluation."""

    def __init__(self):
        self._last = LastStats()

    def record(self, build) -> None:
        """Keep ``build`` (``() -> dict``) as the last evaluation's statistics."""
        self._last.record(build)

    def stats(self) -> dict:
        return dict(self._last.get() or {})


@final
class BatchCallback(NlpsolSignature, ca.Callback):
    """The casadi node that solves ``size`` instances in one batched solve (final).

    Inputs and outputs are casadi's nlpsol ones widened to ``size`` instances
    (:mod:`.nlpsol_io`); ``eval`` hands them to :meth:`NlpsolCore.solve_batch
    <.frontend.NlpsolCore.solve_batch>` as (size, k) arrays and gives the statistics
    to ``sink.record``.  Derivatives are instance by instance, so they are those of
    casadi's own ``map`` of the single-instance callback ``single``
    (``single.map(size).forward(nfwd)`` / ``.reverse(nadj)``, which evaluate the KKT
    sensitivities of :mod:`.sensitivity` at each instance's solution), renamed to the
    names casadi asks for."""

    def __init__(self, name: str, core: "NlpsolCore", size: int, sink, single: ca.Function):
        ca.Callback.__init__(self)
        self.core, self.size, self.sink = core, size, sink
        self._single = single           # keeps the reference callback alive
        self._mapped = None
        self._derivatives = {}          # keeps derivative Functions alive
        # what a saved Function needs to rebuild this node (.nlpsol_serial)
        self.construct(name, {"jit_options": {KEY: node_record(core, batch=size)}})

    def get_sparsity_in(self, i):
        return widened(self.core.sparsity_in(i), self.size)

    def get_sparsity_out(self, i):
        return widened(self.core.sparsity_out(i), self.size)

    def eval(self, arg):
        rows = [rows_of(a, self.core.sparsity_in(i), self.size) for i, a in enumerate(arg)]
        out = self.core.solve_batch(*rows, record=self.sink.record)
        return [columns_of(out[k], self.core.sparsity_out(i), self.size)
                for i, k in enumerate(NLPSOL_OUT)]

    def get_forward(self, nfwd, name, inames, onames, opts):
        return self._renamed(("fwd", name, nfwd), self._map().forward(nfwd), name, inames,
                             onames)

    def get_reverse(self, nadj, name, inames, onames, opts):
        return self._renamed(("rev", name, nadj), self._map().reverse(nadj), name, inames,
                             onames)

    def _map(self) -> ca.Function:
        if self._mapped is None:
            self._mapped = self._single.map(self.size)
        return self._mapped

    def _renamed(self, key, fn: ca.Function, name, inames, onames) -> ca.Function:
        """``fn`` as a Function named ``name`` with inputs ``inames``, outputs
        ``onames`` (same order and sparsity: casadi's derivative signature)."""
        syms = [ca.MX.sym(nm, fn.sparsity_in(i)) for i, nm in enumerate(inames)]
        out = ca.Function(name, syms, fn.call(syms), list(inames), list(onames))
        self._derivatives[key] = out
        return out


@final
@dataclass(frozen=True)
class MapRequest:
    """A ``map`` that caspar batches (final): the Function's ``name``, ``size``
    instances, and the indices of the reduced (shared) inputs and summed outputs."""

    name: str
    size: int
    reduce_in: tuple
    reduce_out: tuple


def map_request(fn: ca.Function, args: tuple) -> MapRequest | None:
    """casadi's ``map`` arguments (the overloads of ``Function.map``) as a
    :class:`MapRequest`, or None for anything casadi should handle itself: bad
    arguments (casadi raises its own error), non-empty options."""
    name, opts = None, {}
    try:
        if args and isinstance(args[0], str):
            # map(name, parallelization, n[, reduce_in, reduce_out[, opts]])
            if not 3 <= len(args) <= 6:
                return None
            name, par, n = args[:3]
            red_in, red_out = (list(args[3:5]) + [[], []])[:2]
            opts = args[5] if len(args) > 5 else {}
            threads = None
        elif len(args) >= 2 and isinstance(args[1], (list, tuple)):
            # map(n, reduce_in: [bool], reduce_out: [bool][, opts])
            if not 3 <= len(args) <= 4:
                return None
            n, par, threads = args[0], "serial", None
            red_in, red_out = args[1], args[2]
            opts = args[3] if len(args) > 3 else {}
            if any(not isinstance(v, bool) for v in list(red_in) + list(red_out)):
                return None
        else:
            # map(n[, parallelization[, max_num_threads]])
            if not 1 <= len(args) <= 3:
                return None
            n = args[0]
            par = args[1] if len(args) > 1 else "serial"
            threads = args[2] if len(args) > 2 else None
            red_in = red_out = []
        if (isinstance(n, bool) or not isinstance(n, int) or n < 1
                or par not in PARALLELIZATIONS or opts
                or (threads is not None and (not isinstance(threads, int) or threads < 1))):
            return None
        reduce_in = _indices(red_in, fn.name_in(), fn.n_in())
        reduce_out = _indices(red_out, fn.name_out(), fn.n_out())
    except (TypeError, ValueError):
        return None
    if reduce_in is None or reduce_out is None:
        return None
    return MapRequest(name or f"map{n}_{fn.name()}", int(n), reduce_in, reduce_out)


def _indices(spec, names, count) -> tuple | None:
    """Reduced inputs/outputs given as names, indices or one bool per entry, as sorted
    indices; None when casadi would refuse them."""
    spec = list(spec)
    if spec and all(isinstance(v, bool) for v in spec):
        return tuple(i for i, v in enumerate(spec) if v) if len(spec) == count else None
    out = set()
    for v in spec:
        if isinstance(v, str) and v in names:
            out.add(names.index(v))
        elif isinstance(v, int) and not isinstance(v, bool) and 0 <= v < count:
            out.add(v)
        else:
            return None
    return tuple(sorted(out))
