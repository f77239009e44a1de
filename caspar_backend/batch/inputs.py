"""The inputs of a batched solve as (B, k) arrays.

Every input may be given for all instances at once or per instance:

* ``None``: the model's value (x0, p, bounds) or nothing (multipliers);
* a scalar or a vector of length k: the same for every instance;
* a 2-D array of shape (B, k): row b for instance b.

B is the number of rows of the 2-D inputs (they must agree), 1 when there are none,
or ``batch_size`` when given; B = 0 is an empty batch (its result has zero rows).  Bad
input raises :class:`~caspar_backend.errors.ModelError` naming the input (and, for
bounds and x0, the instance and the component).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..model import check_inputs, numbers
from ..solver.options import infinite_bounds
from .request import LARGEST_FLOAT

#: the inputs in their order, with the length each instance's row has
INPUT_NAMES = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_g0", "lam_x0")


@dataclass(frozen=True)
class BatchInputs:
    """Final.  Each field float64 (B, k); ``lam_g0``/``lam_x0`` None when not given."""

    x0: np.ndarray
    p: np.ndarray
    lbx: np.ndarray
    ubx: np.ndarray
    lbg: np.ndarray
    ubg: np.ndarray
    lam_g0: np.ndarray | None
    lam_x0: np.ndarray | None

    @property
    def size(self) -> int:
        return self.x0.shape[0]

    def row(self, b: int) -> dict:
        """Instance b's inputs as keyword arguments of :meth:`Problem.solve`."""
        out = dict(x0=self.x0[b], p=self.p[b], lbx=self.lbx[b], ubx=self.ubx[b],
                   lbg=self.lbg[b], ubg=self.ubg[b])
        if self.lam_g0 is not None:
            out["lam_g0"] = self.lam_g0[b]
        if self.lam_x0 is not None:
            out["lam_x0"] = self.lam_x0[b]
        return out

    def subset(self, idx) -> "BatchInputs":
        take = (lambda a: None if a is None else a[idx])
        return BatchInputs(*(take(getattr(self, k)) for k in INPUT_NAMES))


def batch_inputs(problem, batch_size=None, **given) -> BatchInputs:
    """Normalize the inputs of ``problem`` (a :class:`~caspar_backend.problem.Problem`)
    to a :class:`BatchInputs` (see the module doc) and check them.

    Every field is float64 memory of its own (the caller's arrays are copied), except
    that one row shared by every instance -- a 1-D input, or a 2-D one whose rows are
    one row in memory (``np.broadcast_to``: row stride 0) -- stays one read-only row
    broadcast to (B, k), so that later stages can tell a shared row by its stride."""
    if not given.keys() <= _KNOWN:
        raise ModelError(f"solve_batch: unknown input(s) {sorted(given.keys() - _KNOWN)}")
    n, m = problem.n, problem.m
    sizes = (n, problem.n_params, n, n, m, m, m, n)
    defaults = (problem.x0, problem.p, problem.lbx, problem.ubx, problem.lbg, problem.ubg)
    arrays, B = [], None
    for j, name in enumerate(INPUT_NAMES):
        v = given.get(name)
        if v is None:
            if j >= len(defaults):          # a multiplier: nothing
                arrays.append(None)
                continue
            v = defaults[j]
        a = _owned(v, name)
        k = sizes[j]
        if a.ndim == 2:
            if a.shape[1] != k:
                raise ModelError(f"solve_batch: {name} has shape {a.shape}, expected "
                                 f"(B, {k})")
            if B is not None and a.shape[0] != B[0]:
                raise ModelError(f"solve_batch: {name} has {a.shape[0]} rows but "
                                 f"{B[1]} has {B[0]}: every 2-D input needs one row per "
                                 f"instance")
            B = B or (a.shape[0], name)
        elif a.ndim <= 1:
            a = a.reshape(-1)
            if a.size == 1 and k != 1:
                a = np.full(k, float(a[0]))
            if a.size != k:
                raise ModelError(f"solve_batch: {name} has {a.size} entries, expected {k} "
                                 f"(or a (B, {k}) array)")
        else:
            raise ModelError(f"solve_batch: {name} must be 1-D or 2-D, got shape {a.shape}")
        arrays.append(a)
    if batch_size is not None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 0:
            raise ModelError(f"solve_batch: batch_size must be a whole number >= 0, got "
                             f"{batch_size!r}")
        if B is not None and B[0] != batch_size:
            raise ModelError(f"solve_batch: batch_size={batch_size} but {B[1]} has "
                             f"{B[0]} rows")
        B = (int(batch_size), "batch_size")
    nb = 1 if B is None else B[0]
    arrays = [a if a is None or a.ndim == 2 else _broadcast_rows(a, nb) for a in arrays]
    inp = BatchInputs(*arrays)
    _check(problem, inp)
    return inp


_KNOWN = frozenset(INPUT_NAMES)


def with_infinite_bounds(inp: BatchInputs, lo_inf: float, hi_inf: float) -> BatchInputs:
    """``inp`` with IPOPT's nlp_lower_bound_inf / nlp_upper_bound_inf applied to every
    instance's bounds (:func:`~caspar_backend.solver.options.infinite_bounds`): a
    finite lower bound <= ``lo_inf`` is -inf, a finite upper bound >= ``hi_inf`` +inf.
    ``inp`` itself where no bound is that far (one test over all of them)."""
    # (-inf < b <= lo_inf: finite and far; a NaN, refused by the check, is neither)
    los = [_distinct(a) for a in (inp.lbx, inp.lbg)]
    his = [_distinct(a) for a in (inp.ubx, inp.ubg)]
    if not (any(((lo <= lo_inf) & (lo > -np.inf)).any() for lo in los)
            or any(((hi >= hi_inf) & (hi < np.inf)).any() for hi in his)):
        return inp
    lbx, ubx, lbg, ubg = infinite_bounds(lo_inf, hi_inf, inp.lbx, inp.ubx, inp.lbg, inp.ubg)
    return dataclasses.replace(inp, lbx=lbx, ubx=ubx, lbg=lbg, ubg=ubg)


def _owned(v, name: str) -> np.ndarray:
    """``v`` (the input ``name``) as a float64 array in memory of its own
    (:func:`batch_inputs`' rule): a copy, or for a 2-D array of shared rows its one row
    copied and broadcast again.  What is not numbers is a ModelError naming it."""
    if isinstance(v, np.ndarray) and v.ndim == 2 and v.shape[0] > 1 and v.strides[0] == 0:
        return _broadcast_rows(numbers(f"solve_batch: {name}", v[0], copy=True), v.shape[0])
    return numbers(f"solve_batch: {name}", v, copy=True)


def _broadcast_rows(a: np.ndarray, rows: int) -> np.ndarray:
    """``np.broadcast_to(a, (rows, a.size))`` of a contiguous 1-D ``a``: read-only, row
    stride 0, a's memory -- made directly (a third of broadcast_to's ~3 us, which a
    batch pays for every input it shares)."""
    out = np.ndarray((rows, a.size), a.dtype, a, 0, (0, a.itemsize))
    out.flags.writeable = False
    return out


def shared_row(a: np.ndarray) -> bool:
    """Whether every row of the (B, k) input ``a`` is one row in memory (B <= 1, or row
    stride 0): then its instances agree in it without a look at the values."""
    return a.shape[0] <= 1 or a.strides[0] == 0


def _distinct(a: np.ndarray) -> np.ndarray:
    """The rows of the (B, k) input ``a`` that can differ: its one row where every
    instance shares it (:func:`shared_row`), else ``a``."""
    return a[:1] if shared_row(a) else a


def _check(problem, inp: BatchInputs) -> None:
    """Every instance's bounds, x0 and p as a single solve checks them (the request
    rule of :func:`.request.plainly_valid`: x0 and p finite, ``max(lower, -M) <=
    min(upper, M)``; a shared row is tested once, a pair broadcasts against it); where
    an instance fails it, :func:`_report` raises that instance's error."""
    ok = all(np.isfinite(_distinct(a)).all() for a in (inp.x0, inp.p))
    for lo, hi in ((inp.lbx, inp.ubx), (inp.lbg, inp.ubg)):
        ok = ok and bool((np.maximum(_distinct(lo), -LARGEST_FLOAT)
                          <= np.minimum(_distinct(hi), LARGEST_FLOAT)).all())
    if not ok:
        _report(problem, inp)


def _report(problem, inp: BatchInputs) -> None:
    """Raise the error of the first instance whose bounds or x0
    :func:`~caspar_backend.model.check_inputs` rejects (found with array operations,
    then reported by check_inputs itself, whose message names the components, prefixed
    with the instance's index), else of the first whose p holds NaN or Inf."""
    bad = np.zeros(inp.size, bool)
    for lo, hi in ((inp.lbx, inp.ubx), (inp.lbg, inp.ubg)):
        if lo.shape[1]:
            bad |= np.any(np.isnan(lo) | np.isnan(hi) | (lo > hi) | (lo == np.inf)
                          | (hi == -np.inf), axis=1)
    if inp.x0.shape[1]:
        bad |= ~np.all(np.isfinite(inp.x0), axis=1)
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        try:
            check_inputs(inp.lbx[b], inp.ubx[b], inp.lbg[b], inp.ubg[b], inp.x0[b],
                         problem.var_names, problem.con_names)
        except ModelError as exc:
            raise type(exc)(f"instance {b}: {exc}") from None
    if inp.p.shape[1] and not np.all(np.isfinite(inp.p)):
        b = int(np.flatnonzero(~np.all(np.isfinite(inp.p), axis=1))[0])
        raise ModelError(f"instance {b}: the parameter vector p holds NaN or Inf")
