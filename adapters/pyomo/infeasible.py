"""The error for a model that Pyomo's NL writer calls trivially infeasible.

Kept apart from :mod:`.mapping` so that importing the adapter does not import Pyomo
(tests/adapters/test_pyomo_adapter.py::test_import_stays_cheap): Pyomo's exception
class is needed only when a model is read."""

from __future__ import annotations

from pyomo.common.errors import InfeasibleConstraintException

from caspar_backend.errors import ModelError

#: how far a fixed Var's value may lie outside its bounds (Pyomo's NL writer's TOL,
#: pyomo.repn.ampl, absolute)
FIXED_TOL = 1e-8


class TriviallyInfeasibleError(ModelError, InfeasibleConstraintException):
    """A fixed Var's value outside its bounds: a :class:`ModelError` and Pyomo's own
    ``InfeasibleConstraintException`` (what ``SolverFactory('ipopt')`` raises for it),
    so either ``except`` catches it."""
