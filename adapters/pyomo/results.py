"""Status and sign maps between caspar's solver and Pyomo; the legacy results layout.

Signs
-----
caspar solves the minimization form ``min f = s F`` of the user's objective ``F``
(``s = +1`` for minimize, ``-1`` for maximize) and reports multipliers in CasADi's
convention, ``L = f + lam_g' g + lam_x' x``.  Pyomo users see what IPOPT's AMPL
driver writes into the ``.sol`` file (``AmplTNLP::finalize_solution``; the same
numbers reach both Pyomo interfaces), which is the sensitivity of the optimal
value of ``F`` itself:

    dual_j          = dF*/d rhs_j   = -s lam_g_j
    rc_i            = dF*/d bound_i = -s lam_x_i
    ipopt_zL_out_i  =  s zL_i,        zL = max(-lam_x, 0)   (finite lower bounds, else 0)
    ipopt_zU_out_i  = -s zU_i,        zU = max( lam_x, 0)   (finite upper bounds, else 0)

so for a minimization ``zL_out >= 0 >= zU_out`` and for a maximization the
signs flip.  ``rc`` is what ``pyomo.contrib.solver``'s ipopt builds from the two
bound multipliers (the one of larger magnitude).  A warm start inverts the map as
``AmplTNLP::get_starting_point`` does: ``lam_g0 = -s dual``,
``lam_x0 = zU - zL`` with ``zL = s zL_in``, ``zU = -s zU_in``.

caspar returns one multiplier per variable (``lam_x = zU - zL``); IPOPT keeps both
and the inactive one is a small positive number of order ``mu / slack`` instead of
the exact 0 reported here.

Statuses
--------
:data:`STATUS_MAP` has one :class:`PyomoStatus` row per status of
:mod:`caspar_backend.solver.status` (a test checks that it is complete and that
every name is a member of Pyomo's enums).  The legacy columns reproduce what
``SolverFactory('ipopt')`` reports through the ``.sol`` reader
(``pyomo/opt/plugins/sol.py``), the contrib columns what
``pyomo.contrib.solver``'s ipopt reports (``asl_solve_code_to_solution_status``),
with one deliberate difference: IPOPT's AMPL codes 401/402 (CPU/wall time
exceeded) fall in the 400-499 band that both readers call an *iteration* limit;
caspar reports ``maxTimeLimit`` for them, which is what the user asked about.
Likewise ``User_Requested_Stop`` (Ctrl-C, :mod:`caspar_backend.solver.interrupt`):
its code 502 reads as a solver error in both readers; caspar reports what Pyomo's
interface that sees IPOPT's status itself (pynumero's cyipopt) reports, legacy
``aborted``/``userInterrupt``, and contrib's ``interrupted``, with the iterate reached.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import final

import numpy as np

_INF = math.inf


# ================================================================ status table
@final
@dataclass(frozen=True)
class PyomoStatus:
    """How one caspar/IPOPT exit status reaches Pyomo.

    Names are the member names of Pyomo's enums (strings, so this table can be
    read without importing Pyomo):

    * ``ampl_code``: ``solve_result_num`` IPOPT's AMPL driver writes, or ``None``
      where IPOPT stops before writing a ``.sol`` file;
    * ``solver_status`` / ``termination`` / ``solution_status``:
      ``pyomo.opt.SolverStatus`` / ``TerminationCondition`` / ``SolutionStatus``;
    * ``legacy_solution``: the legacy results carry the final iterate (the
      ``.sol`` reader adds a solution for these termination conditions only);
    * ``contrib_termination`` / ``contrib_solution``:
      ``pyomo.contrib.solver.common.results.TerminationCondition`` /
      ``SolutionStatus``.
    """

    caspar: str
    ampl_code: int | None
    message: str        # IPOPT's AMPL message (its log's EXIT line where that says more)
    solver_status: str
    termination: str
    solution_status: str
    legacy_solution: bool
    contrib_termination: str
    contrib_solution: str

    @property
    def has_iterate(self) -> bool:
        """IPOPT wrote a ``.sol`` file, so a final iterate exists."""
        return self.ampl_code is not None


def _row(caspar, code, message, status, term, sol, legacy_sol, cterm, csol):
    return PyomoStatus(caspar, code, message, status, term, sol, legacy_sol, cterm, csol)


_OPT = ("ok", "optimal", "optimal", True, "convergenceCriteriaSatisfied", "optimal")
_FAIL = ("error", "internalSolverError", "error", False, "error", "unknown")
# IPOPT throws before finalize_solution: no .sol file.  Pyomo's legacy IPOPT
# plugin then reports warning/other (IPOPT.process_output); contrib reports
# error with no solution.
_NOSOL = ("warning", "other", "unknown", False, "error", "noSolution")

_ROWS = [
    _row("Solve_Succeeded", 0, "Optimal Solution Found", *_OPT),
    _row("Solved_To_Acceptable_Level", 1, "Solved To Acceptable Level.", *_OPT),
    _row("Feasible_Point_Found", 2, "Found feasible point for square problem.", *_OPT),
    _row("Infeasible_Problem_Detected", 200,
         "Converged to a locally infeasible point. Problem may be infeasible.",
         "warning", "infeasible", "infeasible", True, "locallyInfeasible", "infeasible"),
    _row("Diverging_Iterates", 300, "Iterates diverging; problem might be unbounded.",
         "warning", "unbounded", "unbounded", False, "unbounded", "unknown"),
    _row("Maximum_Iterations_Exceeded", 400, "Maximum Number of Iterations Exceeded.",
         "warning", "maxIterations", "stoppedByLimit", True, "iterationLimit", "unknown"),
    # see the module docstring: IPOPT-through-Pyomo says maxIterations here
    _row("Maximum_CpuTime_Exceeded", 401, "Maximum CPU Time Exceeded.",
         "warning", "maxTimeLimit", "stoppedByLimit", True, "maxTimeLimit", "unknown"),
    _row("Maximum_WallTime_Exceeded", 402, "Maximum Wallclock Time Exceeded.",
         "warning", "maxTimeLimit", "stoppedByLimit", True, "maxTimeLimit", "unknown"),
    _row("Search_Direction_Becomes_Too_Small", 500, "Search Direction becomes Too Small.",
         *_FAIL),
    _row("Restoration_Failed", 501, "Restoration Phase Failed.", *_FAIL),
    # IPOPT's AMPL driver says "Unknown Error" for the rest; the exit message of
    # the log says more
    _row("Error_In_Step_Computation", 502, "Error in step computation!", *_FAIL),
    _row("Invalid_Number_Detected", 502,
         "Invalid number in NLP function or derivative detected.", *_FAIL),
    # an interrupt (Ctrl-C), see the module docstring: Pyomo's own IPOPT interface
    # (pynumero's cyipopt) says userInterrupt, pyomo.contrib.solver's enum interrupted
    _row("User_Requested_Stop", 502,
         "Stopping optimization at current point as requested by user.",
         "aborted", "userInterrupt", "stoppedByLimit", True, "interrupted", "unknown"),
    _row("Internal_Error", 502, "Internal Error.", *_FAIL),
    _row("Not_Enough_Degrees_Of_Freedom", None, "Problem has too few degrees of freedom.",
         *_NOSOL),
    _row("Invalid_Problem_Definition", None, "Problem has inconsistent variable bounds "
         "or constraint sides.", *_NOSOL),
    _row("Invalid_Option", None, "Invalid option encountered.", *_NOSOL),
    _row("Unrecoverable_Exception", None, "Some uncaught Ipopt exception encountered.",
         *_NOSOL),
    _row("Insufficient_Memory", None, "Not enough memory.", *_NOSOL),
]

#: caspar status name -> :class:`PyomoStatus`
STATUS_MAP = MappingProxyType({r.caspar: r for r in _ROWS})

#: the sentence the legacy ``.sol`` reader attaches to each AMPL code band
_AMPL_BANDS = (
    (0, 99, "OPTIMAL SOLUTION FOUND!"),
    (100, 199, "Optimal solution indicated, but ERROR LIKELY!"),
    (200, 299, "INFEASIBLE SOLUTION: constraints cannot be satisfied!"),
    (300, 399, "UNBOUNDED PROBLEM: the objective can be improved without limit!"),
    (400, 499, "EXCEEDED MAXIMUM NUMBER OF ITERATIONS: the solver was stopped by a "
               "limit that you set!"),
    (500, 599, "FAILURE: the solver stopped by an error condition in the solver "
               "routines!"),
)

#: ``(lo, hi, label, text)``: what contrib's ``asl_solve_code_to_solution_status``
#: appends to the solver's message for a code in ``lo..hi`` (nothing when optimal)
_CONTRIB_BANDS = (
    (100, 199, "solved?", "optimal solution indicated, but error likely"),
    (200, 299, "infeasible", "constraints cannot be satisfied"),
    (300, 399, "unbounded", "objective can be improved without limit"),
    (400, 499, "limit", "stopped by a limit that you set"),
    (500, 599, "failure", "stopped by an error condition in the solver"),
)


def pyomo_status(name: str) -> PyomoStatus:
    """The row of ``name``; an unknown name (a status added to the solver but
    not here) maps like IPOPT's ``Unknown Error`` rather than failing."""
    row = STATUS_MAP.get(name)
    if row is None:
        row = _row(name, 502, "Unknown Error", *_FAIL)
    return row


def ampl_band_description(code: int | None) -> str:
    """The legacy reader's ``status_description`` for an AMPL code."""
    for lo, hi, text in _AMPL_BANDS:
        if code is not None and lo <= code <= hi:
            return text
    return ""


def contrib_message(message: str, code: int | None) -> str:
    """``extra_info.solver_message`` as contrib's ipopt builds it."""
    if code is None:
        return f"{message}; AMPL(None): solver did not generate a SOL file"
    for lo, hi, label, text in _CONTRIB_BANDS:
        if lo <= code <= hi:
            return f"{message}; AMPL({code}:{label}): {text}"
    return message


def enum_member(enum_cls, name: str):
    """``enum_cls[name]``; a KeyError names the enum (used by the table test)."""
    try:
        return enum_cls[name]
    except KeyError:
        raise KeyError(f"{name!r} is not a member of {enum_cls.__name__}") from None


# ================================================================= signs
def pyomo_duals(lam_g, sense: int) -> np.ndarray:
    """``dual = dF*/d rhs = -s lam_g`` (see the module docstring)."""
    return -float(sense) * np.asarray(lam_g, dtype=float)


def pyomo_reduced_costs(lam_x, sense: int) -> np.ndarray:
    """``rc = dF*/d bound = -s lam_x``."""
    return -float(sense) * np.asarray(lam_x, dtype=float)


def ipopt_bound_multipliers(lam_x, sense: int, lbx, ubx) -> tuple[np.ndarray, np.ndarray]:
    """``(ipopt_zL_out, ipopt_zU_out)`` from CasADi's ``lam_x = zU - zL``.

    Entries for an infinite bound are 0 (IPOPT has no multiplier there)."""
    lam_x = np.asarray(lam_x, dtype=float)
    zl = np.where(np.isfinite(lbx), np.maximum(-lam_x, 0.0), 0.0)
    zu = np.where(np.isfinite(ubx), np.maximum(lam_x, 0.0), 0.0)
    s = float(sense)
    return s * zl + 0.0, -s * zu + 0.0     # + 0.0: no -0.0 in the suffixes


def warm_start_multipliers(sense: int, dual=None, zl_in=None, zu_in=None):
    """``(lam_g0, lam_x0)`` in CasADi's convention from Pyomo-signed ``dual``,
    ``ipopt_zL_in`` and ``ipopt_zU_in`` arrays (``None``: not given)."""
    s = float(sense)
    lam_g0 = None if dual is None else -s * np.asarray(dual, dtype=float)
    lam_x0 = None
    if zl_in is not None or zu_in is not None:
        n = len(zl_in if zl_in is not None else zu_in)
        zl = s * np.asarray(zl_in, dtype=float) if zl_in is not None else np.zeros(n)
        zu = -s * np.asarray(zu_in, dtype=float) if zu_in is not None else np.zeros(n)
        lam_x0 = zu - zl
    return lam_g0, lam_x0


# ============================================================= the solution
@final
@dataclass(frozen=True, eq=False)
class PyomoSolution:
    """The final iterate of one solve, in Pyomo's terms.

    ``variables[i]`` (VarData) has value ``x[i]``, reduced cost ``rc[i]`` and
    bound multipliers ``zl[i]``/``zu[i]`` (``ipopt_zL_out``/``ipopt_zU_out``);
    ``constraints[j]`` (ConstraintData) has dual ``dual[j]``; ``objective`` is the
    user's objective value (``None`` without an objective).  Arrays are float64
    copies, so a later solve does not change them.
    """

    variables: Sequence
    constraints: Sequence
    x: np.ndarray
    dual: np.ndarray
    rc: np.ndarray
    zl: np.ndarray
    zu: np.ndarray
    objective: float | None

    @classmethod
    def from_result(cls, mapping, result, lbx, ubx) -> PyomoSolution:
        """Convert a :class:`~caspar_backend.solver.result.SolveResult` whose ``f``
        is the minimization form ``s F``."""
        s = mapping.sense
        zl, zu = ipopt_bound_multipliers(result.lam_x, s, lbx, ubx)
        f = float(result.f)
        return cls(
            variables=list(mapping.x_vars), constraints=list(mapping.constraints),
            x=np.array(result.x, dtype=float),
            dual=pyomo_duals(result.lam_g, s) + 0.0,
            rc=pyomo_reduced_costs(result.lam_x, s) + 0.0,
            zl=zl, zu=zu,
            objective=None if mapping.objective is None else s * f)

    def rc_ipopt_style(self) -> np.ndarray:
        """contrib ipopt's ``rc``: the bound multiplier of larger magnitude."""
        return np.where(np.abs(self.zu) > np.abs(self.zl), self.zu, self.zl)


# ======================================================= legacy results
def legacy_results(model, row: PyomoStatus, solution: PyomoSolution | None, *,
                   sense: int, n: int, m: int, has_objective: bool, message: str,
                   solver_name: str, iterations: int, seconds: float, suffixes):
    """Legacy ``SolverResults`` plus its ``SymbolMap`` (``None`` without a solution).

    The layout is the one ``SolverFactory('ipopt')`` produces from the ``.sol``
    file: variables ``v<i>`` with ``Value`` (and ``ipopt_zL_out``,
    ``ipopt_zU_out``, ``Rc`` when asked for), constraints ``c<j>`` with ``Dual``,
    so that ``model.solutions.load_from(results)`` loads it the usual way.
    ``suffixes`` is the set of import suffix names to fill; ``seconds`` the solve's
    wall time (``solver.time`` and ``solver.wallclock_time``).
    """
    from pyomo.core.expr.symbol_map import SymbolMap
    from pyomo.opt import (ProblemSense, SolutionStatus, SolverResults, SolverStatus,
                           TerminationCondition)

    res = SolverResults()
    prob = res.problem
    prob.name = model.name
    prob.number_of_objectives = 1 if has_objective else 0
    prob.number_of_constraints = m
    prob.number_of_variables = n
    prob.sense = ProblemSense.maximize if sense < 0 else ProblemSense.minimize
    feasible = row.solution_status == "optimal" and solution is not None
    if feasible and solution.objective is not None:
        # a local NLP solver proves no bound: the other side stays infinite
        if sense < 0:
            prob.lower_bound, prob.upper_bound = solution.objective, _INF
        else:
            prob.lower_bound, prob.upper_bound = -_INF, solution.objective

    slv = res.solver
    slv.name = solver_name                 # "<solver> <version>", as Pyomo's direct solvers
    slv.status = enum_member(SolverStatus, row.solver_status)
    slv.termination_condition = enum_member(TerminationCondition, row.termination)
    # the .sol reader masks ':' because results are written as YAML
    slv.message = message.replace(":", "\\x3a")
    slv.termination_message = message
    if row.ampl_code is not None:
        slv.id = row.ampl_code
    slv.error_rc = 0
    slv.time = seconds
    slv.wallclock_time = seconds
    slv.statistics.black_box.number_of_iterations = iterations

    if not (row.legacy_solution and solution is not None):
        return res, None
    smap = SymbolMap()
    soln = res.solution.add()
    soln.status = enum_member(SolutionStatus, row.solution_status)
    soln.status_description = ampl_band_description(row.ampl_code)
    soln.message = slv.message
    var_sym = [f"v{i}" for i in range(len(solution.variables))]
    con_sym = [f"c{j}" for j in range(len(solution.constraints))]
    smap.addSymbols(zip(solution.variables, var_sym))
    smap.addSymbols(zip(solution.constraints, con_sym))
    extra = []
    if "ipopt_zL_out" in suffixes:
        extra.append(("ipopt_zL_out", solution.zl.tolist()))
    if "ipopt_zU_out" in suffixes:
        extra.append(("ipopt_zU_out", solution.zu.tolist()))
    if "rc" in suffixes:
        extra.append(("Rc", solution.rc_ipopt_style().tolist()))
    variable = soln.variable
    for i, (sym, val) in enumerate(zip(var_sym, solution.x.tolist())):
        entry = {"Value": val}
        for key, vals in extra:
            entry[key] = vals[i]
        variable[sym] = entry
    if "dual" in suffixes:
        constraint = soln.constraint
        for sym, d in zip(con_sym, solution.dual.tolist()):
            constraint[sym] = {"Dual": d}
    return res, smap
