"""caspar for Pyomo users beyond ``SolverFactory('caspar')``:
``from caspar_backend.pyomo import least_squares``.

    lsq = least_squares(model)            # the objective a sum of squares, or the residuals given
    summary = lsq.solve()                 # Ceres' Levenberg-Marquardt; the solution in the Vars

The implementation lives in ``caspar_backend.adapters.pyomo.least_squares``; this module
forwards to it on first use, so importing it imports neither Pyomo nor the solver.
"""

from __future__ import annotations

from ._lazy import lazy_attributes

_LAZY = {
    "least_squares": ("caspar_backend.adapters.pyomo.least_squares", "least_squares"),
    "PyomoLeastSquares": ("caspar_backend.adapters.pyomo.least_squares", "PyomoLeastSquares"),
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
