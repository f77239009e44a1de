"""The multipliers of a square problem (as many free variables as equality
constraints, no other constraints; IPOPT's IsSquareProblem).

The solution of a square system is its feasible point; its multipliers are a
by-product.  IPOPT gives them the value of the feasibility problem: the bound
multipliers zero and the least-squares constraint multipliers

    y = argmin ||grad f(w) + A(w)^T y||_2      (no size limit),

after every accepted step once the iterate is feasible (ComputeFeasibilityMultipliers:
kept only where the termination test then passes) and unconditionally at a feasible
point the restoration phase found (ComputeFeasibilityMultipliersPostprocess).
"""

from __future__ import annotations

import math

CONVERGED = ("Solve_Succeeded", "Solved_To_Acceptable_Level")


def set_feasibility_multipliers(it, least_squares_y) -> bool:
    """z = 0 and the least-squares y at the iterate ``it`` (``least_squares_y(limit)``:
    the least-squares multipliers at ``it`` and whether their system was solved); where
    it is singular y stays (IPOPT's ComputeFeasibilityMultipliersPostprocess).  Returns
    whether it was solved."""
    it.zL[:] = 0.0
    it.zU[:] = 0.0
    y, solved = least_squares_y(math.inf)
    if solved:
        it.y[:] = y
    return solved


def try_feasibility_multipliers(opts, shared, calc, termination, mu, saved,
                                least_squares_y) -> None:
    """IPOPT's ComputeFeasibilityMultipliers after an accepted step of ``calc``'s iterate
    (barrier parameter ``mu``): once it is feasible (unscaled violation <=
    constr_viol_tol) and not yet converged, try :func:`set_feasibility_multipliers`;
    keep them only if the termination test then succeeds, else restore the iterate's
    multipliers (through ``saved``: buffers ``(y, zL, zU)`` of their shapes).  Both
    tests count as IPOPT's CheckConvergence calls do (acceptable iterates included)."""
    sh, it = shared, calc.it
    e = calc.errors(mu)
    ue = calc.unscaled(e)
    if ue["constr"] > opts.constr_viol_tol:
        return
    if termination.check(e, ue, it, sh.iter, sh.t0, sh.cpu0) is not None:
        return
    y0, zL0, zU0 = saved
    y0[:], zL0[:], zU0[:] = it.y, it.zL, it.zU
    # (a singular least-squares system: the iterate's multipliers back at once, IPOPT's)
    if set_feasibility_multipliers(it, least_squares_y):
        e = calc.errors(mu)
        if termination.check(e, calc.unscaled(e), it, sh.iter, sh.t0, sh.cpu0) in CONVERGED:
            return
    it.y[:], it.zL[:], it.zU[:] = y0, zL0, zU0
