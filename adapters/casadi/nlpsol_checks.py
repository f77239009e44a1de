"""The checks of one call's numeric inputs of ``nlpsol(..., 'caspar', ...)``: the first
bad component raises, named.

Rules (the model's own validation, :func:`caspar_backend.model.check_bounds`): a bound
pair ``lo <= hi`` with neither NaN nor an infinity on the wrong side (``lo = +inf``,
``hi = -inf``), for ``lbx/ubx`` per variable and ``lbg/ubg`` per constraint; a finite
``x0`` and a finite ``p``.  The message names the component (with where it was declared,
when a ``describe`` function is set, as Opti does) and the input.  For B instances at
once the masks run over every row and the first bad instance's message is prefixed with
its index.

:func:`check_shapes` is casadi's dimension check of the problem dict at construction
(``Nlpsol::init``, casadi/core/nlpsol.cpp): ``x`` and ``g`` dense vectors, ``f`` dense,
with casadi's messages (``Expected a dense vector 'g', but got 2x2,2nz.``).  caspar's own
readers take any shape by its nonzeros (:mod:`.nlp`); ``nlpsol`` keeps casadi's contract,
so a problem that builds with ``'caspar'`` builds with ``'ipopt'``.
"""

from __future__ import annotations

from typing import final

import numpy as np

from caspar_backend.errors import ModelError, NonFiniteError
from caspar_backend.model import check_bounds


@final
class InputChecks:
    """The checks of one nlpsol's inputs (final).  ``describe``: a dict ``{'variable':
    f | None, 'constraint': f | None}``, read at each check (the caller may set the
    functions later), ``f(i)`` the text appended to component ``i``'s name."""

    def __init__(self, var_names, con_names, param_names, describe: dict):
        self.var_names, self.con_names = var_names, con_names
        self.param_names, self.describe = param_names, describe

    def check(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """Raise a ModelError naming the first bad component (wording as the model's
        own validation, plus the input's name)."""
        if (_pair_ok(lbx, ubx) and _pair_ok(lbg, ubg) and np.isfinite(x0).all()
                and np.isfinite(p).all()):
            return                       # the common case: one pass, nothing to name
        for lo, hi, names, what, a, b in ((lbx, ubx, self._names("variable"), "variable",
                                           "lbx", "ubx"),
                                          (lbg, ubg, self._names("constraint"), "constraint",
                                           "lbg", "ubg")):
            check_bounds(lo, hi, names, what, (a, b))
        bad = np.flatnonzero(~np.isfinite(x0))
        if bad.size:
            i = bad[0]
            raise NonFiniteError(f"variable {self._names('variable')[i]} has a non-finite "
                                 f"initial value {float(x0[i])!r} (x0[{i}])")
        bad = np.flatnonzero(~np.isfinite(p))
        if bad.size:
            i = bad[0]
            raise NonFiniteError(f"parameter {self.param_names[i]} has a non-finite value "
                                 f"{float(p[i])!r} (p[{i}])")

    def check_rows(self, x0, p, lbx, ubx, lbg, ubg) -> None:
        """:meth:`check` for (B, k) arrays: the masks over every row at once, then the
        first bad row's message, prefixed with its instance."""
        bad = np.zeros(x0.shape[0], bool)
        for lo, hi in ((lbx, ubx), (lbg, ubg)):
            # what check_bounds refuses: a NaN, lo > hi, an infinity on the wrong side
            bad |= (np.isnan(lo) | np.isnan(hi) | (lo > hi) | (lo == np.inf)
                    | (hi == -np.inf)).any(axis=1)
        bad |= ~np.isfinite(x0).all(axis=1) | ~np.isfinite(p).all(axis=1)
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            try:
                self.check(x0[b], p[b], lbx[b], ubx[b], lbg[b], ubg[b])
            except ModelError as exc:
                raise type(exc)(f"instance {b}: {exc}") from None

    def _names(self, what):
        """Names for error messages, with the declaration site when one is known."""
        base = self.var_names if what == "variable" else self.con_names
        desc = self.describe[what]
        if desc is None:
            return base
        return _Described(base, desc)


def _pair_ok(lo, hi) -> bool:
    """Whether a bound pair passes :func:`~caspar_backend.model.check_bounds`: no NaN
    and ``lo <= hi`` (a NaN fails the comparison), neither ``lo = +inf`` nor ``hi =
    -inf``."""
    return bool((lo <= hi).all() and (lo < np.inf).all() and (hi > -np.inf).all())


@final
class _Described:
    """``names[i]`` followed by ``describe(i)``, computed only for the entry an error
    message asks for (final)."""

    def __init__(self, names, describe):
        self.names, self.describe = names, describe

    def __getitem__(self, i):
        return f"{self.names[i]} ({self.describe(int(i))})"


def check_shapes(nlp: dict) -> None:
    """casadi's dimension checks of an nlpsol problem dict (module doc): a ModelError
    with casadi's message for the first that fails.  An empty entry passes (no ``g``:
    0x0 or 0x1; ``f`` 0x0: no objective)."""
    for key, vector in (("g", True), ("f", False), ("x", True)):
        v = nlp.get(key)
        if v is None or not hasattr(v, "sparsity"):
            continue
        sp = v.sparsity()
        if sp.numel() == 0 and key != "x":
            continue
        if not sp.is_dense() or (vector and not sp.is_vector()):
            raise ModelError(f"Expected a dense {'vector ' if vector else ''}'{key}', but "
                             f"got {sp.dim(True)}.")


def check_discrete(disc, var_names) -> None:
    """The option ``discrete`` (one flag per variable, or None): a ModelError for a
    wrong length or for the first integer variable (caspar solves continuous NLPs)."""
    if disc is None:
        return
    if len(disc) != len(var_names):
        raise ModelError(f"option 'discrete' has {len(disc)} entries, expected "
                         f"{len(var_names)} (one per variable)")
    bad = [var_names[i] for i, d in enumerate(disc) if d]
    if bad:
        raise ModelError(f"variable {bad[0]} is discrete (integer): caspar solves "
                         "continuous NLPs only"
                         + (f" ({len(bad)} discrete variables)" if len(bad) > 1 else ""))
