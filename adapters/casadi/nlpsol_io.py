"""The inputs and outputs of ``nlpsol(..., 'caspar', ...)``: casadi's names, defaults,
and the numeric layout of B instances side by side.

A Function evaluating B instances at once (a B-column call, ``map(B)``) takes and gives
every input and output *widened*: for a single-instance sparsity ``sp`` of shape
(r, c), the widened one is ``repmat(sp, 1, B)`` of shape (r, c*B), instance b in
columns ``b*c .. b*c + c - 1`` (casadi's ``Function.map`` layout).  Its nonzeros, in
casadi's column-major order, are instance 0's nonzeros, then instance 1's, ...; so the
numeric form used by the solver, a float64 (B, nnz) array with row b the nonzeros of
instance b, is that vector reshaped (:func:`rows_of`, :func:`columns_of`).
"""

from __future__ import annotations

import math

import numpy as np

import casadi as ca

#: casadi's nlpsol input and output names, in order
NLPSOL_IN = ("x0", "p", "lbx", "ubx", "lbg", "ubg", "lam_x0", "lam_g0")
NLPSOL_OUT = ("x", "f", "g", "lam_x", "lam_g", "lam_p")
#: casadi.nlpsol_default_in(), in NLPSOL_IN order
DEFAULT_IN = (0.0, 0.0, -math.inf, math.inf, -math.inf, math.inf, 0.0, 0.0)


def vec(dm) -> np.ndarray:
    """The nonzeros of a DM, float64."""
    return np.array(dm.nonzeros(), dtype=float)


def widened(sp: ca.Sparsity, size: int) -> ca.Sparsity:
    """``sp`` repeated for ``size`` instances (see the module doc)."""
    return ca.repmat(sp, 1, size)


def rows_of(dm, sp: ca.Sparsity, size: int) -> np.ndarray:
    """float64 (size, sp.nnz()): row b the nonzeros of instance b of ``dm``, a DM of
    the widened shape; entries outside the widened sparsity are dropped, as casadi
    projects a call's argument onto the input's sparsity."""
    target = widened(sp, size)
    dm = ca.DM(dm)
    if dm.sparsity() != target:
        dm = ca.project(dm, target)
    return vec(dm).reshape(size, sp.nnz())


def columns_of(rows, sp: ca.Sparsity, size: int) -> ca.DM:
    """The DM of the widened shape whose instance b holds the nonzeros ``rows[b]``
    (the inverse of :func:`rows_of`)."""
    rows = np.asarray(rows, dtype=float).reshape(size, sp.nnz())
    return ca.DM(widened(sp, size), rows.ravel())


class NlpsolSignature:
    """Abstract mixin of the casadi Callbacks that run solves: casadi's nlpsol input and
    output names (:data:`NLPSOL_IN`, :data:`NLPSOL_OUT`), and the declaration that
    their forward and reverse derivatives exist and use the nominal outputs (the
    solutions); the subclass gives the sparsities, ``eval`` and the derivative
    Functions."""

    def uses_output(self):
        return True

    def has_forward(self, nfwd):
        return True

    def has_reverse(self, nadj):
        return True

    def get_n_in(self):
        return len(NLPSOL_IN)

    def get_n_out(self):
        return len(NLPSOL_OUT)

    def get_name_in(self, i):
        return NLPSOL_IN[i]

    def get_name_out(self, i):
        return NLPSOL_OUT[i]
