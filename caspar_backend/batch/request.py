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

The service's path: :func:`submitted` only records a request -- the inputs as given
(arrays and lists copied, so that a caller reusing its buffer does not change a queued
request) and the model's vectors at that moment for the missing ones -- with no NumPy
work in the submitting thread (under many client threads, per-request NumPy work there
costs several times its own time in GIL hand-offs).  :func:`checked_batch` then checks
and stacks a whole batch with array operations: each input of the B requests one
(B, k) array, one validity test per row; a request that fails it, or whose inputs are
not plain vectors of the right length, goes through :func:`checked_request` alone,
which raises its single solve's error or gives its row.
"""

from __future__ import annotations

from itertools import repeat
from operator import is_
from typing import NamedTuple

import numpy as np

from ..errors import NonFiniteError, num
from ..model import as_vector, check_inputs

#: the vectors of a request, in ``solve_batch``'s keyword names
FIELDS = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_g0", "lam_x0")
#: the vectors of a request's row, in their order there
_ROW = ("x0", "p", "lbx", "lbg", "ubx", "ubg")
LARGEST_FLOAT = np.finfo(np.float64).max


class Request(NamedTuple):
    """Final.  One checked request: ``row`` float64, the concatenation
    ``[x0 | p | lbx | lbg | ubx | ubg]`` (a fresh array, never the caller's), and
    ``cuts``, the offsets of its six parts (``cuts[k]:cuts[k + 1]``, :data:`_ROW`
    order); ``lam_g0`` (m) / ``lam_x0`` (n) fresh float64 vectors or None when not
    given.  ``x0``, ``p``, ``lbx``, ... are views of ``row``."""

    row: np.ndarray
    cuts: tuple
    lam_g0: np.ndarray | None
    lam_x0: np.ndarray | None

    def part(self, name: str) -> np.ndarray:
        k = _ROW.index(name)
        return self.row[self.cuts[k]:self.cuts[k + 1]]

    x0 = property(lambda self: self.part("x0"))
    p = property(lambda self: self.part("p"))
    lbx = property(lambda self: self.part("lbx"))
    ubx = property(lambda self: self.part("ubx"))
    lbg = property(lambda self: self.part("lbg"))
    ubg = property(lambda self: self.part("ubg"))


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
    lbx, lbg, ubx, ubg = (model.validated_bounds(name, v) for name, v in
                          (("lbx", lbx), ("lbg", lbg), ("ubx", ubx), ("ubg", ubg)))
    n, q, m = x0.size, p.size, lbg.size
    row = np.concatenate((x0, p, lbx, lbg, ubx, ubg))
    if not plainly_valid(row, n + q, n + q + n + m):
        _raise_invalid(problem, x0, p, lbx, ubx, lbg, ubg)
    # the solver's own conversion of the warm-start multipliers (solver.driver)
    lam_g0 = None if lam_g0 is None else as_vector("lam_g0", lam_g0, problem.m)
    lam_x0 = None if lam_x0 is None else as_vector("lam_x0", lam_x0, problem.n)
    a = n + q
    return Request(row, (0, n, a, a + n, a + n + m, a + 2 * n + m, a + 2 * (n + m)),
                   lam_g0, lam_x0)


def plainly_valid(rows, lo: int, hi: int):
    """Whether each row of ``rows`` (:class:`Request`'s layout along the last axis,
    lower bounds at ``lo:hi``, upper bounds after) passes every check of
    :func:`_raise_invalid`: x0 and p finite, and for each bound pair ``max(lower, -M) <=
    min(upper, M)`` with M the largest float -- False for a NaN, for lower > upper, for
    lower = +inf and for upper = -inf, True otherwise.  A bool for one row, a bool array
    for a (B, L) stack."""
    ok = (np.logical_and.reduce(np.isfinite(rows[..., :lo]), axis=-1)
          & np.logical_and.reduce(np.maximum(rows[..., lo:hi], -LARGEST_FLOAT)
                                  <= np.minimum(rows[..., hi:], LARGEST_FLOAT), axis=-1))
    return bool(ok) if np.ndim(ok) == 0 else ok


def _raise_invalid(problem, x0, p, lbx, ubx, lbg, ubg) -> None:
    """Raise the error of ``problem.solve`` for these inputs (check_inputs), or for a
    non-finite ``p`` NonFiniteError naming its entries."""
    check_inputs(lbx, ubx, lbg, ubg, x0, problem.var_names, problem.con_names)
    bad = np.flatnonzero(~np.isfinite(p))
    if bad.size:
        names = problem.param_names
        listed = ", ".join((f"{names[i]} " if names[i] != f"p[{i}]" else "")
                           + f"(p[{i}]={num(p[i])})" for i in bad[:5])
        more = f" and {bad.size - 5} more" if bad.size > 5 else ""
        raise NonFiniteError(f"the parameter vector p holds NaN or Inf: {listed}{more}")


class Submitted(NamedTuple):
    """Final.  A request as submitted: ``given`` the inputs (x0, p, lbx, ubx, lbg, ubg,
    lam_g0, lam_x0) as the caller gave them (None: missing; arrays and lists copied),
    ``defaults`` the model's (x0, p, lbx, ubx, lbg, ubg) at submission."""

    given: tuple
    defaults: tuple

    def checked(self, problem) -> Request:
        """:func:`checked_request` of this request (raises its single solve's error)."""
        x0, p, lbx, ubx, lbg, ubg, lam_g0, lam_x0 = (
            d if v is None and d is not None else v
            for v, d in zip(self.given, self.defaults + (None, None)))
        return checked_request(problem, x0, p, lam_g0, lam_x0, lbx=lbx, ubx=ubx, lbg=lbg,
                               ubg=ubg)


#: Submitted.given's order, and the sizes' names in :func:`_sizes`
_GIVEN = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_g0", "lam_x0")


_COPIED = (np.ndarray, list)
_NONE8 = (None,) * 8


def _kept(v):
    """``v`` safe from the caller's later changes: arrays and lists copied."""
    return v.copy() if isinstance(v, _COPIED) else v


def submitted(problem, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None, ubx=None,
              lbg=None, ubg=None) -> Submitted:
    """The :class:`Submitted` record of these inputs (no check: :func:`checked_batch`)."""
    m = problem.model
    if lbx is None and ubx is None and lbg is None and ubg is None and lam_g0 is None \
            and lam_x0 is None:      # the common request: new p (and x0) only
        given = _NONE8 if x0 is None and p is None else \
            (_kept(x0), _kept(p), None, None, None, None, None, None)
    else:
        given = tuple(map(_kept, (x0, p, lbx, ubx, lbg, ubg, lam_g0, lam_x0)))
    return Submitted(given, (m.x0, m.p, m.lbx, m.ubx, m.lbg, m.ubg))


class _Irregular(Exception):
    """Inputs that are not one plain (B, k) array: checked one request at a time."""


def _block(vals: tuple, defaults: tuple | None, size: int) -> np.ndarray | None:
    """One input of every request as a float64 (B, size) array: ``vals`` the values
    given (None: missing), else ``defaults`` (the model's at submission; None for a
    multiplier, which is then None).  Raises _Irregular for a mix of given and missing
    values, values that are not vectors of length ``size``, or values NumPy cannot read
    as floats."""
    # (identity tests mapped in C: a request's values may be arrays, for which == is
    # elementwise, so no tuple.count)
    missing = sum(map(is_, vals, repeat(None)))
    if missing == len(vals):
        if defaults is None:
            return None
        first = defaults[0]
        if all(map(is_, defaults, repeat(first))):
            return np.broadcast_to(first, (len(vals), first.size))
        vals = defaults
    elif missing:
        raise _Irregular
    try:
        a = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise _Irregular from None
    if a.shape != (len(vals), size):
        raise _Irregular
    return a


def checked_batch(problem, items: list) -> tuple:
    """Check and stack the :class:`Submitted` requests ``items`` (module doc):
    ``(kwargs, valid, errors)`` -- ``kwargs`` the ``solve_batch`` keyword arguments of
    the valid requests (as :func:`stacked`; None when none is valid), ``valid`` their
    indices in ``items``, ``errors`` a list of ``(index, exception)``: the single
    solve's error of each invalid request."""
    n, q, m = problem.n, problem.n_params, problem.m
    given = list(zip(*(it.given for it in items)))
    defaults = list(zip(*(it.defaults for it in items))) + [None, None]
    try:
        blocks = [_block(given[k], defaults[k], size)
                  for k, size in enumerate((n, q, n, n, m, m, m, n))]
    except _Irregular:
        return _one_by_one(problem, items)
    x0, p, lbx, ubx, lbg, ubg, lam_g0, lam_x0 = blocks
    # the rows of Request's layout, checked by the single request's rule
    ok = plainly_valid(np.concatenate((x0, p, lbx, lbg, ubx, ubg), axis=1), n + q,
                       2 * n + q + m)
    if ok.all():
        kwargs = dict(zip(_GIVEN, blocks))
        return kwargs, list(range(len(items))), []
    # rare: the invalid ones' exact errors, the rest as one request each
    return _one_by_one(problem, items)


def _one_by_one(problem, items: list) -> tuple:
    """:func:`checked_batch` by :func:`checked_request` of each request."""
    good, valid, errors = [], [], []
    for i, it in enumerate(items):
        try:
            good.append(it.checked(problem))
            valid.append(i)
        except Exception as exc:   # noqa: BLE001 - this request's answer
            errors.append((i, exc))
    return (stacked(good) if good else None), valid, errors


def stacked(requests: list) -> dict:
    """The ``solve_batch`` keyword arguments of ``requests`` (a non-empty list of
    :class:`Request` of one problem), as the module doc says: column blocks of the
    stacked rows; a multiplier given by none is None."""
    rows = np.stack([r.row for r in requests])
    cuts = requests[0].cuts
    out = {name: rows[:, cuts[k]:cuts[k + 1]] for k, name in enumerate(_ROW)}
    for name in ("lam_g0", "lam_x0"):
        given = [getattr(r, name) for r in requests]
        first = next((v for v in given if v is not None), None)
        out[name] = None if first is None else np.stack(
            [np.zeros(first.size) if v is None else v for v in given])
    return out
