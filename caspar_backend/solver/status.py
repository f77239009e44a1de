"""The solver's exit statuses: IPOPT's names, messages and success flags.

One row per status in :data:`STATUSES`.  ``success`` is True for the statuses CasADi's
IPOPT interface reports as ``success`` (a solution that satisfies the requested or the
acceptable tolerances, or a feasible point asked for).  ``kind`` groups statuses into the
classes tests compare against IPOPT: ``optimal``, ``infeasible``, ``unbounded``,
``limit``, ``error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Status:
    name: str
    success: bool
    kind: str
    exit_message: str


_ROWS = [
    Status("Solve_Succeeded", True, "optimal", "Optimal Solution Found."),
    Status("Solved_To_Acceptable_Level", True, "optimal",
           "Solved To Acceptable Level."),
    Status("Feasible_Point_Found", True, "optimal", "Feasible point for square problem "
           "found."),
    Status("Infeasible_Problem_Detected", False, "infeasible",
           "Converged to a point of local infeasibility. Problem may be infeasible."),
    Status("Search_Direction_Becomes_Too_Small", False, "error",
           "Search Direction is becoming Too Small."),
    Status("Diverging_Iterates", False, "unbounded",
           "Iterates diverging; problem might be unbounded."),
    Status("User_Requested_Stop", False, "error", "Stopping optimization at current point "
           "as requested by user."),
    Status("Maximum_Iterations_Exceeded", False, "limit",
           "Maximum Number of Iterations Exceeded."),
    Status("Maximum_CpuTime_Exceeded", False, "limit", "Maximum CPU time exceeded."),
    Status("Maximum_WallTime_Exceeded", False, "limit", "Maximum wallclock time exceeded."),
    Status("Restoration_Failed", False, "error", "Restoration Failed!"),
    Status("Error_In_Step_Computation", False, "error", "Error in step computation!"),
    Status("Not_Enough_Degrees_Of_Freedom", False, "error",
           "Problem has too few degrees of freedom."),
    Status("Invalid_Problem_Definition", False, "error", "Problem has inconsistent "
           "variable bounds or constraint sides."),
    Status("Invalid_Option", False, "error", "Invalid option encountered."),
    Status("Invalid_Number_Detected", False, "error",
           "Invalid number in NLP function or derivative detected."),
    Status("Unrecoverable_Exception", False, "error", "Some uncaught Ipopt exception "
           "encountered."),
    Status("Insufficient_Memory", False, "error", "Not enough memory."),
    Status("Internal_Error", False, "error", "INTERNAL ERROR: Unknown SolverReturn value - "
           "Notify IPOPT Authors."),
]

#: status table by IPOPT name
STATUSES = MappingProxyType({s.name: s for s in _ROWS})

#: the status classes
KINDS = ("optimal", "infeasible", "unbounded", "limit", "error")


def status(name: str) -> Status:
    return STATUSES[name]


class SolverStop(Exception):
    """Ends a solve with the status ``status`` (a key of :data:`STATUSES`) and an
    optional message; raised inside the interior point, caught by the driver."""

    def __init__(self, status, message=""):
        super().__init__(status)
        self.status, self.message = status, message
