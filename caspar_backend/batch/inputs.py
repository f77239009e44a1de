"""The inputs of a batched solve as (B, k) arrays.

Every input may be given for all instances at once or per instance:

* ``None``: the model's value (x0, p, bounds) or nothing (multipliers);
* a scalar or a vector of length k: the same for every instance;
* a 2-D array of shape (B, k): row b for instance b.

B is the number of rows of the 2-D inputs (they must agree), 1 when there are none,
or ``batch_size`` when given.  Bad input raises :class:`~caspar_backend.errors.ModelError`
naming the input (and, for bounds and x0, the instance and the component).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from ..model import check_inputs

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
    to a :class:`BatchInputs` (see the module doc) and check them."""
    sizes = dict(x0=problem.n, p=problem.n_params, lbx=problem.n, ubx=problem.n,
                 lbg=problem.m, ubg=problem.m, lam_g0=problem.m, lam_x0=problem.n)
    defaults = dict(x0=problem.x0, p=problem.p, lbx=problem.lbx, ubx=problem.ubx,
                    lbg=problem.lbg, ubg=problem.ubg)
    unknown = set(given) - set(INPUT_NAMES)
    if unknown:
        raise ModelError(f"solve_batch: unknown input(s) {sorted(unknown)}")
    arrays, B = {}, None
    for name in INPUT_NAMES:
        v = given.get(name)
        if v is None:
            if name not in defaults:
                arrays[name] = None
                continue
            v = defaults[name]
        a = np.array(v, dtype=float)
        k = sizes[name]
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
        arrays[name] = a
    if batch_size is not None:
        if B is not None and B[0] != batch_size:
            raise ModelError(f"solve_batch: batch_size={batch_size} but {B[1]} has "
                             f"{B[0]} rows")
        B = (int(batch_size), "batch_size")
    nb = 1 if B is None else B[0]
    for name, a in arrays.items():
        if a is not None and a.ndim == 1:
            arrays[name] = np.broadcast_to(a, (nb, a.size))
    inp = BatchInputs(**arrays)
    _check(problem, inp)
    return inp


def _check(problem, inp: BatchInputs) -> None:
    """Every instance's bounds and x0 as :func:`~caspar_backend.model.check_inputs`
    checks one solve's, with array operations; the first bad instance is reported by
    check_inputs itself (its message names the components), prefixed with its index."""
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
