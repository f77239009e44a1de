"""Legacy ``pyomo.environ.SolverFactory('caspar')``: :class:`LegacyCasparSolver`
with SolverFactory('ipopt')'s status pairs, suffixes and loading (see :mod:`.plugin`)."""

from __future__ import annotations

import logging
import re
import time
from typing import final

from pyomo.common.collections import Bunch
from pyomo.core.base.block import BlockData
from pyomo.core.base.suffix import active_import_suffix_generator
from pyomo.opt.base.solvers import OptSolver

from caspar_backend.errors import ModelError
from caspar_backend.version import __version__
from .engine import (IMPORT_SUFFIXES, SOLVER_NAME, VERSION, EngineAccess, _Engine, _message,
                     _Outcome, _tee_streams, solve_message)
from .results import enum_member, legacy_results, pyomo_status
from .scenario_results import ScenarioFlavour
from .scenarios import run_scenarios

# ==================================================== legacy (OptSolver) API
#: legacy solve() keywords that are accepted and have nothing to do here
_LEGACY_IGNORED = ("keepfiles", "symbolic_solver_labels", "solnfile", "warmstart",
                   "available", "solver_io", "select")


@final
class LegacyCasparSolver(EngineAccess, OptSolver):
    """caspar as ``pyomo.environ.SolverFactory('caspar')`` (the legacy interface).

    ``solve(model, tee=False, load_solutions=True, options=None, options_string='',
    timelimit=None, logfile=None, report_timing=False, suffixes=None, warmstart=...,
    keepfiles=..., symbolic_solver_labels=...)`` returns a ``SolverResults`` laid
    out as ``SolverFactory('ipopt')``'s: the status pairs of :data:`STATUS_MAP`,
    ``solver.id`` = IPOPT's AMPL code, ``solver.message``, ``solver.time``, the
    iteration count in ``solver.statistics.black_box.number_of_iterations``, and
    the objective value as the finite side of ``problem.lower_bound`` /
    ``upper_bound``.  The solver log text is ``results.solver_log`` (a plain
    attribute: a results entry would break ``results.write()``'s YAML) and
    ``opt._log``.

    Loading goes through ``model.solutions.load_from`` as for every legacy
    solver: ok statuses load silently, warning statuses (infeasible, limits) load
    the last iterate with Pyomo's warning, error statuses raise ``ValueError``
    with ``load_solutions=True``.  A pyomo.kernel block is loaded as
    ``OptSolver.solve`` loads one: ``model.load_solution(results.solution(0))``
    with the symbol map on the solution (kept there with ``load_solutions=False``
    for a later ``load_solution``), kernel import suffixes filled.  The primal
    start is always the model's current values (IPOPT's start from the NL file), hence ``warmstart`` is accepted;
    ``keepfiles`` and ``symbolic_solver_labels`` are accepted and unused.
    """

    def __init__(self, **kwds):
        kwds["type"] = SOLVER_NAME
        kwds.setdefault("doc", "caspar interior-point NLP solver (IPOPT's algorithm)")
        super().__init__(**kwds)
        self._engine = _Engine()
        self._log = ""
        self._capabilities = Bunch(linear=True, integer=False, quadratic_objective=True,
                                   quadratic_constraint=True, sos1=False, sos2=False)

    def available(self, exception_flag=True) -> bool:
        return True

    def license_is_valid(self) -> bool:
        return True

    def warm_start_capable(self) -> bool:
        return True

    def executable(self):
        """The ``caspar`` AMPL executable this installation provides (Pyomo's
        ``SolverFactory('ipopt').executable()`` names IPOPT's; this solver runs in the
        process and needs none), None where it is not on the PATH."""
        import shutil

        return shutil.which("caspar")

    def _get_version(self):
        return VERSION + (0,)

    def solve(self, *args, **kwds):
        from pyomo.core.kernel.block import IBlock

        if len(args) != 1 or not isinstance(args[0], (BlockData, IBlock)):
            raise ValueError("SolverFactory('caspar').solve expects one Pyomo model "
                             f"(a ConcreteModel, Block or pyomo.kernel block), got {args!r}")
        model = args[0]
        kernel = isinstance(model, IBlock)
        options = dict(self.options)
        options.update(kwds.pop("options", None) or {})
        options.update(self._options_string_to_dict(kwds.pop("options_string", "")))
        tee = kwds.pop("tee", False)
        load_solutions = kwds.pop("load_solutions", True)
        timelimit = kwds.pop("timelimit", None)
        logfile = kwds.pop("logfile", None)
        report_timing = kwds.pop("report_timing", False)
        wanted = list(kwds.pop("suffixes", None) or [])
        for key in _LEGACY_IGNORED:
            kwds.pop(key, None)
        if kwds:
            raise ValueError(f"Solver={SOLVER_NAME} passed unrecognized keywords: \n\t"
                             + "\n\t".join(f"{k} = {v}" for k, v in kwds.items()))

        prep = self._engine.prepare(model, options, timelimit, legacy=True)
        if prep.compiled is None:
            # SolverFactory('ipopt') raises a ValueError here too (Pyomo's NL writer:
            # "No variables appear in the Pyomo model constraints or objective");
            # ModelError is one, and names the fixed variables.  The model is untouched.
            raise ModelError(_no_free_variables(model, self._engine.compiled))
        if prep.infeasible is not None:
            # IPOPT, given the violated constant row (the legacy NL route keeps
            # trivial rows), ends with Infeasible_Problem_Detected: that status
            # pair, reported without solving, so there is no iterate to load
            out = _Outcome(prep.compiled.mapping, None,
                           pyomo_status("Infeasible_Problem_Detected"), None,
                           prep.infeasible + "\n", 0.0)
            for s in _tee_streams(tee):
                s.write(out.log)
            message, iterations = _message(prep.infeasible), 0
        else:
            out = self._engine.solve(prep, _tee_streams(tee))
            message, iterations = solve_message(out.row, out.result), out.result.iterations
        self._log = out.log
        mapping, row = out.mapping, out.row
        suffixes = _wanted_suffixes(wanted + _model_import_suffixes(model, kernel))
        results, smap = legacy_results(
            model, row, out.solution, sense=mapping.sense, n=mapping.n, m=mapping.m,
            has_objective=mapping.objective is not None,
            message=message, solver_name=f"{SOLVER_NAME} {__version__}",
            iterations=iterations, seconds=out.seconds, suffixes=suffixes)
        t_load = time.perf_counter()
        results._smap = None
        results._smap_id = None
        if kernel:
            _load_kernel(model, results, smap, load_solutions)
        else:
            _load_aml(model, results, smap, load_solutions)
        t_load = time.perf_counter() - t_load
        object.__setattr__(results, "solver_log", out.log)
        if logfile is not None:
            with open(logfile, "w") as fh:
                fh.write(out.log)
        if report_timing:
            print(f"      {prep.t_extract:6.2f} seconds required for presolve")
            print(f"      {out.seconds:6.2f} seconds required for solver")
            print(f"      {t_load:6.2f} seconds required for postsolve")
        return results

    def solve_scenarios(self, model, scenarios, *, load=None, tee=False, options=None,
                        timelimit=None, client=None, **solver_options):
        """Solve ``model`` once per scenario, all in one batched solve, without
        writing to the model unless ``load`` asks: ``scenarios`` a list of mappings
        ``{mutable Param (or ParamData, or its name): value}`` (indexed Params:
        ``{m.q: {index: value}}``); the other Params keep the model's values, every
        scenario starts from the model's current variable values.  Returns a
        :class:`~.scenario_results.ScenarioResults`, one result per scenario with this
        interface's status enums (``pyomo.opt``'s TerminationCondition, SolverStatus,
        SolutionStatus), objective, variable values, duals and iterations.
        ``load=i`` writes scenario i into the model (its Param values, then the
        solution as ``solve`` loads one, import Suffixes included); so does
        ``results[i].load()`` later.  Options: ``self.options``, then ``options``,
        then the keyword arguments (IPOPT's names); ``timelimit`` in seconds.
        ``client``: a ``dask.distributed.Client`` whose workers solve the scenarios in
        chunks (``caspar_backend.batch.distributed``; the same results).  Bad
        keys or values raise a ModelError naming the scenario and the component
        (:mod:`.scenarios`), before anything is solved."""
        opts = dict(self.options)
        opts.update(options or {})
        opts.update(solver_options)
        return run_scenarios(self._engine, _LEGACY_SCENARIOS, model, scenarios, opts,
                             timelimit, legacy=True, tee_streams=_tee_streams(tee),
                             load=load, client=client)


@final
class _LegacyScenarios(ScenarioFlavour):
    """Statuses and loading of ``solve_scenarios`` as the legacy ``solve`` (final)."""

    def statuses(self, outcome) -> dict:
        from pyomo.opt import SolutionStatus, SolverStatus, TerminationCondition

        row = outcome.row
        return {"termination_condition": enum_member(TerminationCondition, row.termination),
                "solver_status": enum_member(SolverStatus, row.solver_status),
                "solution_status": enum_member(SolutionStatus, row.solution_status)}

    def load(self, model, outcome, mapping) -> None:
        from pyomo.core.kernel.block import IBlock

        kernel = isinstance(model, IBlock)
        results, smap = legacy_results(
            model, outcome.row, outcome.solution, sense=mapping.sense, n=mapping.n,
            m=mapping.m, has_objective=mapping.objective is not None,
            message=solve_message(outcome.row, outcome),
            solver_name=f"{SOLVER_NAME} {__version__}",
            iterations=outcome.iterations, seconds=0.0,
            suffixes=_wanted_suffixes(_model_import_suffixes(model, kernel)))
        results._smap = None
        results._smap_id = None
        (_load_kernel if kernel else _load_aml)(model, results, smap, True)


_LEGACY_SCENARIOS = _LegacyScenarios()


def _no_free_variables(model, compiled) -> str:
    """Why a model with no free variable cannot be solved, naming its fixed ones."""
    fixed = [] if compiled is None else [
        o.name for o in compiled.mapping.p_objs if o.is_variable_type()]
    listed = ", ".join(fixed[:5]) + (f" and {len(fixed) - 5} more" if len(fixed) > 5 else "")
    why = (f"every variable is fixed ({listed}); unfix some" if fixed
           else "the model has no variables")
    return (f"No variables appear in the active constraints or objective of model "
            f"{model.name}: {why}; there is nothing for caspar to solve (as with "
            "SolverFactory('ipopt'), whose NL writer raises the same ValueError)")


def _model_import_suffixes(model, kernel: bool) -> list:
    """Names of the model's active import Suffixes (top level for kernel, as
    ``OptSolver.solve`` collects them)."""
    if kernel:
        from pyomo.core.kernel.suffix import import_suffix_generator

        return [s.storage_key for s in
                import_suffix_generator(model, active=True, descend_into=False)]
    return [name for name, _ in active_import_suffix_generator(model)]


def _load_aml(model, results, smap, load_solutions) -> None:
    """Load through ``model.solutions`` as every legacy solver does for an AML
    model: warning statuses log and load, error statuses raise."""
    if not hasattr(model, "solutions"):
        # a sub-Block: Pyomo's Block.write adds the container the same way
        from pyomo.core.base.PyomoModel import ModelSolutions

        model.solutions = ModelSolutions(model)
    if smap is not None:
        model.solutions.add_symbol_map(smap)
        results._smap_id = id(smap)
    if load_solutions:
        model.solutions.load_from(results, select=0, default_variable_value=None)
        results._smap_id = None
        results.solution.clear()
    elif smap is not None:
        results._smap = smap
        model.solutions.delete_symbol_map(id(smap))


def _load_kernel(model, results, smap, load_solutions) -> None:
    """Load as ``OptSolver.solve`` does for a pyomo.kernel block: kernel has no
    ``model.solutions``; the symbol map travels on the solution itself, so a
    caller with ``load_solutions=False`` can ``model.load_solution(results.solution(0))``
    later.  Without a solution nothing is loaded and, when loading was asked
    for, Pyomo's "No solution is available" error is logged."""
    del results._smap_id
    if len(results.solution) == 1:
        soln = results.solution(0)
        soln.symbol_map = smap
        soln.default_variable_value = None
        if load_solutions:
            model.load_solution(soln)
    elif load_solutions:
        logging.getLogger("pyomo.opt").error("No solution is available")


def _wanted_suffixes(patterns) -> set:
    """Suffix names to report: as the legacy ``.sol`` reader, each requested name is
    a regular expression matched against the names the solver provides."""
    out = set()
    for pat in patterns:
        for name in IMPORT_SUFFIXES:
            if re.match(str(pat), name):
                out.add(name)
    return out
