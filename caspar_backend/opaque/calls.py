"""The opaque calls of a model, and the model extended by their results.

A model with opaque calls (:mod:`caspar_backend.opaque`) is an
:class:`~caspar_backend.model.NLPModel` over ``n`` variables whose expressions may also
read ``n_aux`` *auxiliary* leaves ``var(n + j)``, ``0 <= j < n_aux``: the result
nonzeros of the calls.  :class:`OpaqueCalls` says how they are computed:

* ``args``: the argument expressions ``a_r(x, p, y)``, ``r = 0 .. n_args-1``, nodes of
  the model's graph (an argument may read the results of other calls: nesting);
* ``groups``: one :class:`CallGroup` per opaque function, its N calls as tables:
  instance i computes ``y[out_aux[:, i]] = F(a[arg_rows[:, i]])``.

:func:`extended_model` turns this into an ordinary model over ``z = (x, y)``, with the
arguments as extra rows ``m .. m + n_args - 1`` after ``g``; that model is compiled
like any other and evaluated by :class:`~caspar_backend.opaque.evaluator.ComposedEvaluator`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .host import HostFunction


@dataclass(eq=False)
class CallGroup:
    """N calls of one opaque function (final).

    ``arg_rows`` int64 (n_in, N): the argument row (0-based, into
    :attr:`OpaqueCalls.args`) of each input nonzero of each instance; ``out_aux`` int64
    (n_out, N): the auxiliary index (0-based, ``y``'s) of each result nonzero.
    ``active``: the input positions whose argument is not a constant in some instance
    (set by :class:`OpaqueCalls`)."""

    fn: HostFunction
    arg_rows: np.ndarray
    out_aux: np.ndarray
    active: np.ndarray | None = None

    def __post_init__(self):
        self.arg_rows = np.asarray(self.arg_rows, dtype=np.int64).reshape(self.fn.n_in, -1)
        N = self.arg_rows.shape[1]
        self.out_aux = np.asarray(self.out_aux, dtype=np.int64).reshape(self.fn.n_out, N)

    @property
    def size(self) -> int:
        return self.arg_rows.shape[1]


@dataclass(eq=False)
class OpaqueCalls:
    """The opaque calls of a model (final; see the module docstring)."""

    n_aux: int
    args: list
    groups: list
    #: names of the auxiliary leaves (len n_aux) and of the argument rows (len n_args)
    aux_names: list | None = None
    arg_names: list | None = None

    def __post_init__(self):
        na = len(self.args)
        seen = np.zeros(self.n_aux, dtype=np.int64)
        const = np.array([a.op == "const" for a in self.args], dtype=bool)
        for grp in self.groups:
            if grp.arg_rows.size and (grp.arg_rows.min() < 0 or grp.arg_rows.max() >= na):
                raise ModelError(f"opaque function {grp.fn.describe()}: an argument row is "
                                 f"outside 0..{na - 1}")
            if grp.out_aux.size and (grp.out_aux.min() < 0 or grp.out_aux.max() >= self.n_aux):
                raise ModelError(f"opaque function {grp.fn.describe()}: a result index is "
                                 f"outside 0..{self.n_aux - 1}")
            np.add.at(seen, grp.out_aux.ravel(), 1)
            if grp.active is None:
                varying = ~const[grp.arg_rows] if grp.arg_rows.size else \
                    np.zeros(grp.arg_rows.shape, bool)
                grp.active = np.flatnonzero(varying.any(axis=1)).astype(np.int64)
        if np.any(seen != 1):
            j = int(np.flatnonzero(seen != 1)[0])
            raise ModelError(f"auxiliary value {j} is the result of {int(seen[j])} opaque "
                             "calls (expected exactly one)")
        if self.aux_names is None:
            self.aux_names = [f"y[{j}]" for j in range(self.n_aux)]
        if self.arg_names is None:
            self.arg_names = [f"a[{r}]" for r in range(na)]

    @property
    def n_args(self) -> int:
        return len(self.args)

    def summary(self) -> list[str]:
        """One line per opaque function for the solver's log: name, kind, calls,
        flat argument and result sizes per call, differentiated inputs."""
        return [f"Opaque function {grp.fn.name!r} ({grp.fn.kind}): {grp.size} call"
                f"{'s' if grp.size != 1 else ''}, {grp.fn.n_in} -> {grp.fn.n_out} nonzeros "
                f"per call ({len(grp.active)} differentiated inputs), evaluated on the "
                "host" for grp in self.groups]


def extended_model(model):
    """The model over ``z = (x, y)`` (``n + n_aux`` variables, the auxiliary ones free
    and starting at 0) whose rows are ``g`` (``0 .. m-1``, bounds as the model's) then
    the calls' arguments (``m .. m + n_args - 1``, unbounded).  Its pre-grouped blocks
    are the model's (they never read ``y``)."""
    from ..model import NLPModel

    calls: OpaqueCalls = model.opaque
    m, ny, na = model.m, calls.n_aux, calls.n_args
    inf = np.full(ny, np.inf)
    rows = np.concatenate([model.constraint_rows, m + np.arange(na, dtype=np.int64)])
    return NLPModel(
        model.graph, model.objective, list(model.constraints) + list(calls.args),
        np.concatenate([model.lbx, -inf]), np.concatenate([model.ubx, inf]),
        np.concatenate([model.lbg, np.full(na, -np.inf)]),
        np.concatenate([model.ubg, np.full(na, np.inf)]),
        x0=np.concatenate([model.x0, np.zeros(ny)]), p=model.p,
        var_names=list(model.var_names) + list(calls.aux_names),
        con_names=list(model.con_names) + list(calls.arg_names),
        param_names=model.param_names, sense=model.sense, source=model.source,
        meta=dict(model.meta), constraint_blocks=list(model.constraint_blocks),
        objective_blocks=list(model.objective_blocks), constraint_rows=rows,
        n_rows=m + na)
