"""CasADi's front door to least squares: a residual expression in, a compiled
:class:`~caspar_backend.lsq.problem.LeastSquaresProblem` out.

    from caspar_backend.casadi import least_squares
    prob = least_squares({"x": x, "p": p, "r": r}, residual_block_size=2, loss=Huber(1.0))
    summary = prob.solve(x0=x0, p=p0, lbx=lbx, ubx=ubx, max_num_iterations=100)

``r`` (SX or MX, any shape; read column-major like ``g``) is compiled exactly as an
``nlpsol`` problem's constraints are (:func:`~caspar_backend.adapters.casadi.nlp.
casadi_to_model` with ``g = r`` and ``f = 0``): ``Function.map`` calls become template
blocks, so a bundle adjustment written as ``residual.map(N)(C[:, cam], X[:, pt], U)``
compiles one template and finds its points-onto-cameras structure for the Schur
complement.  The cost is Ceres': ``1/2 sum_b rho(|r_b|^2)``, where each residual block
b is ``residual_block_size`` consecutive entries of r (e.g. 2: one reprojection error
from a 2 x N map output) and ``rho`` the robust loss (None: plain squares).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from caspar_backend.errors import ModelError

from .nlp import casadi_to_model


def least_squares(problem: dict, *, x0=None, lbx=None, ubx=None, p=None,
                  residual_block_size: int = 1, loss=None, expand: bool = True):
    """The :class:`~caspar_backend.lsq.problem.LeastSquaresProblem` of ``problem``, a
    dict with ``x`` (decision symbols), ``r`` (the residuals) and optionally ``p``
    (parameters).  ``x0``, ``lbx``, ``ubx``, ``p``: defaults for its solves (``lbx ==
    ubx`` holds a variable constant).  Errors name the offending key or entry."""
    from caspar_backend.lsq.problem import LeastSquaresProblem

    if not isinstance(problem, dict):
        raise ModelError(f"least_squares: expected a dict with 'x' and 'r', got "
                         f"{type(problem).__name__}")
    unknown = set(problem) - {"x", "p", "r"}
    if unknown:
        raise ModelError(f"least_squares: unknown key(s) {sorted(unknown)}; expected 'x', "
                         "'r' and optionally 'p' (an objective or constraints belong to nlpsol)")
    if "x" not in problem or "r" not in problem:
        raise ModelError("least_squares: the problem dict needs 'x' (the decision symbols) "
                         "and 'r' (the residuals)")
    r = problem["r"]
    if not isinstance(r, (ca.SX, ca.MX)):
        raise ModelError(f"least_squares: 'r' must be a casadi SX or MX expression, got "
                         f"{type(r).__name__}")
    g = ca.vec(r)
    m = int(g.numel())
    k = int(residual_block_size)
    if k < 1 or m % k:
        raise ModelError(f"least_squares: residual_block_size={residual_block_size} does not "
                         f"divide the {m} residuals")
    nlp = {"x": problem["x"], "f": type(g)(0), "g": g}
    if "p" in problem:
        nlp["p"] = problem["p"]
    model = casadi_to_model(nlp, x0=x0, lbx=lbx, ubx=ubx, p=p, expand=expand)
    model.con_names = [f"r[{i}]" for i in range(m)]
    return LeastSquaresProblem(model, loss=loss,
                               residual_block_of_row=np.arange(m, dtype=np.int64) // k)
