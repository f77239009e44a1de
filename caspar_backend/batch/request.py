"""One request of a batched solve, checked alone, and a list of them stacked.

A request is what one :meth:`Problem.solve <caspar_backend.problem.Problem.solve>` call
takes as input (no options): ``x0`` (n), ``p`` (n_params), ``lbx``, ``ubx`` (n), ``lbg``,
``ubg`` (m) and optionally ``lam_g0`` (m), ``lam_x0`` (n).  :func:`checked_request`
fills the missing ones with the model's values *at that moment* and checks the request
with the very functions ``Problem.solve`` uses, so a bad request raises the error its
single solve would raise -- before it can share a batch with others.  One check more
than the single solve: ``p`` must be finite, as :func:`~caspar_backend.batch.solve_batch`
requires of every instance (a NaN ``p`` would otherwise fail the whole batch).

:func:`stacked` turns B requests into the keyword arguments of ``solve_batch``: each
input a float64 (B, k) array, row b from request b; a multiplier vector that only some
requests give is zero in the others' rows (the single solve reads a missing multiplier
vector as zeros, so the answer is unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import NonFiniteError, num
from ..model import as_vector, check_inputs

#: the vectors of a request, in ``solve_batch``'s keyword names
FIELDS = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_g0", "lam_x0")


@dataclass(frozen=True)
class Request:
    """Final.  One checked request: float64 vectors of the lengths in the module doc
    (fresh copies, never the caller's arrays); ``lam_g0``/``lam_x0`` None when not
    given."""

    x0: np.ndarray
    p: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    lam_g0: np.ndarray | None
    lam_x0: np.ndarray | None


def checked_request(problem, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None,
                    ubx=None, lbg=None, ubg=None) -> Request:
    """The :class:`Request` of these inputs to ``problem`` (a
    :class:`~caspar_backend.problem.Problem`), or the ModelError (NonFiniteError, ...)
    that ``problem.solve`` with the same inputs raises; a non-finite ``p`` raises
    NonFiniteError naming its entries."""
    model = problem.model
    # the same calls, in the same order, as Problem.solve: the first error is the same
    p = problem._param_vector(problem.p if p is None else p)
    x0 = as_vector("x0", problem.x0 if x0 is None else x0, problem.n)
    bounds = [model.validated_bounds(name, v).copy() for name, v in
              (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))]
    check_inputs(*bounds, x0, problem.var_names, problem.con_names)
    bad = np.flatnonzero(~np.isfinite(p))
    if bad.size:
        names = problem.param_names
        listed = ", ".join((f"{names[i]} " if names[i] != f"p[{i}]" else "")
                           + f"(p[{i}]={num(p[i])})" for i in bad[:5])
        more = f" and {bad.size - 5} more" if bad.size > 5 else ""
        raise NonFiniteError(f"the parameter vector p holds NaN or Inf: {listed}{more}")
    # the solver's own conversion of the warm-start multipliers (solver.driver)
    lam_g0 = None if lam_g0 is None else as_vector("lam_g0", lam_g0, problem.m)
    lam_x0 = None if lam_x0 is None else as_vector("lam_x0", lam_x0, problem.n)
    return Request(x0, p, *bounds, lam_g0, lam_x0)


def stacked(requests: list) -> dict:
    """The ``solve_batch`` keyword arguments of ``requests`` (a non-empty list of
    :class:`Request`), as the module doc says; a multiplier given by none is None."""
    out = {}
    for name in FIELDS:
        rows = [getattr(r, name) for r in requests]
        given = [v for v in rows if v is not None]
        if not given:
            out[name] = None
            continue
        k = given[0].size
        out[name] = np.stack([np.zeros(k) if v is None else v for v in rows])
    return out
