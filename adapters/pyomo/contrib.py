"""``pyomo.contrib.solver`` interface: :class:`CasparSolver` and its results and
solution loader, as contrib's ipopt (see :mod:`.plugin`)."""

from __future__ import annotations

import datetime
import math
import time
from typing import final

from pyomo.common.collections import ComponentMap
from pyomo.common.config import ADVANCED_OPTION, ConfigList, ConfigValue
from pyomo.common.timing import HierarchicalTimer
from pyomo.contrib.solver.common.base import Availability, SolverBase
from pyomo.contrib.solver.common.config import SolverConfig
from pyomo.contrib.solver.common.results import Results, SolutionStatus, TerminationCondition
from pyomo.contrib.solver.common.solution_loader import SolutionLoader
from pyomo.contrib.solver.common.util import NoOptimalSolutionError, NoSolutionError
from pyomo.core.staleflag import StaleFlagManager

from .engine import (EngineAccess, VERSION, _Engine, _message, _record_dict, _tee_streams, logger,
                     solve_message)
from .results import PyomoSolution, contrib_message, enum_member
from .scenario_results import ScenarioFlavour
from .scenarios import run_scenarios


# ===================================================== contrib (SolverBase) API
@final
class CasparSolutionLoader(SolutionLoader):
    """``pyomo.contrib.solver`` solution loader over a :class:`PyomoSolution`.

    ``load_vars`` writes ``x`` into the problem's variables only (fixed and
    unused variables are not touched); ``load_import_suffixes`` fills the model's
    import Suffixes ``dual``, ``rc``, ``ipopt_zL_out`` and ``ipopt_zU_out`` (signs:
    :mod:`.results`).  ``solution`` None: the solve produced no iterate.
    """

    def __init__(self, model, solution: PyomoSolution | None):
        self._pyomo_model = model
        self._solution = solution

    def get_number_of_solutions(self) -> int:
        return 0 if self._solution is None else 1

    def _require(self) -> PyomoSolution:
        if self._solution is None:
            raise NoSolutionError()
        return self._solution

    def get_vars(self, vars_to_load=None):
        sol = self._require()
        full = ComponentMap(zip(sol.variables, sol.x.tolist()))
        if vars_to_load is None:
            return full
        out = ComponentMap()
        for v in vars_to_load:
            if v not in full:
                raise ValueError(f"variable {v.name} is not part of the problem caspar "
                                 "solved (fixed, or in no active constraint or objective)")
            out[v] = full[v]
        return out

    #: the name of the appsi-era interface
    get_primals = get_vars

    def load_vars(self, vars_to_load=None) -> None:
        for v, val in self.get_vars(vars_to_load).items():
            v.set_value(val, skip_validation=True)
        StaleFlagManager.mark_all_as_stale(delayed=True)

    def get_duals(self, cons_to_load=None):
        sol = self._require()
        pairs = zip(sol.constraints, sol.dual.tolist())
        if cons_to_load is None:
            return dict(pairs)
        wanted = set(cons_to_load)
        return {c: d for c, d in pairs if c in wanted}

    def get_reduced_costs(self, vars_to_load=None):
        sol = self._require()
        pairs = zip(sol.variables, sol.rc_ipopt_style().tolist())
        if vars_to_load is None:
            return ComponentMap(pairs)
        wanted = {id(v) for v in vars_to_load}
        return ComponentMap((v, r) for v, r in pairs if id(v) in wanted)

    def load_import_suffixes(self) -> None:
        suffixes = self._collect_and_clear_import_suffixes()
        if self._solution is None:
            return
        sol = self._solution
        if "dual" in suffixes:
            suffixes["dual"].update(self.get_duals())
        if "rc" in suffixes:
            suffixes["rc"].update(self.get_reduced_costs())
        for name, vals in (("ipopt_zL_out", sol.zl), ("ipopt_zU_out", sol.zu)):
            if name in suffixes:
                suffixes[name].update(zip(sol.variables, vals.tolist()))


@final
class CasparConfig(SolverConfig):
    """``SolverConfig``: tee, load_solutions, raise_exception_on_nonoptimal_result,
    time_limit (-> ``max_wall_time``), solver_options (IPOPT's option names,
    :mod:`caspar_backend.solver.options` plus :data:`FRONTEND_OPTIONS`).
    ``working_dir`` and ``symbolic_solver_labels`` are accepted and unused (no
    files are written)."""


@final
class CasparResults(Results):
    """contrib ``Results`` with ``iteration_count`` (also in ``extra_info``, where
    Pyomo 6.10's ipopt puts it)."""

    def __init__(self, *args, **kwds):
        super().__init__(*args, **kwds)
        if "iteration_count" not in self:
            self.iteration_count = self.declare(
                "iteration_count",
                ConfigValue(default=None, description="Interior-point iterations."))


@final
class CasparSolver(EngineAccess, SolverBase):
    """caspar's interior-point NLP solver as a ``pyomo.contrib.solver`` interface.

    ``solve(model, **config)`` mirrors ``pyomo.contrib.solver``'s ipopt: the
    termination condition and solution status of :data:`STATUS_MAP`;
    ``raise_exception_on_nonoptimal_result`` (default True) raises
    ``NoOptimalSolutionError`` unless the solution status is optimal;
    ``load_solutions`` raises ``NoSolutionError`` when there is no iterate;
    ``incumbent_objective`` at an optimal point; ``objective_bound`` = -inf
    (minimize) / +inf (maximize), since a local solver proves no bound;
    ``solver_log``; ``timing_info`` (``wall_time``, ``timer``, phases);
    ``extra_info`` (``iteration_count``, ``solver_message``, final unscaled
    errors, ``iteration_log``).
    """

    CONFIG = CasparConfig()

    def __init__(self, **kwds):
        super().__init__(**kwds)
        self._engine = _Engine()

    def available(self):
        return Availability.FullLicense

    def version(self):
        return VERSION

    def is_persistent(self) -> bool:
        return False

    def solve(self, model, **kwds):
        start = time.perf_counter()
        results = CasparResults()
        results.timing_info.start_timestamp = datetime.datetime.now(datetime.timezone.utc)
        results.solver_name = self.name
        results.solver_version = VERSION
        config = self.config(value=kwds, preserve_implicit=True)
        timer = config.timer
        if timer is None:
            timer = config.timer = HierarchicalTimer()
        if config.threads and config.threads != 1:
            logger.warning("The `threads=%s` option was specified, but this is not used "
                           "by caspar.", config.threads)
        timer.start("prepare")
        try:
            prep = self._engine.prepare(model, config.solver_options.value(),
                                        config.time_limit)
        finally:
            timer.stop("prepare")
        # as contrib's ipopt: every Var is stale until a solution is loaded (only
        # now: a rejected model keeps its stale flags)
        StaleFlagManager.mark_all_as_stale()
        solution = None
        if prep.compiled is None:
            results.termination_condition = TerminationCondition.emptyModel
            results.solution_status = SolutionStatus.noSolution
            results.extra_info.iteration_count = results.iteration_count = 0
        elif prep.infeasible is not None:
            # as contrib's ipopt when the NL writer finds a trivially infeasible row
            results.termination_condition = TerminationCondition.provenInfeasible
            results.solution_status = SolutionStatus.noSolution
            results.extra_info.iteration_count = results.iteration_count = 0
            results.extra_info.solver_message = prep.infeasible
            results.solver_log = prep.infeasible + "\n"
        else:
            timer.start("solve")
            try:
                out = self._engine.solve(prep, config.tee)
            finally:
                timer.stop("solve")
            solution = out.solution
            self._fill(results, prep, out)
        results.solution_loader = CasparSolutionLoader(model, solution)

        if (config.raise_exception_on_nonoptimal_result
                and results.solution_status != SolutionStatus.optimal):
            raise NoOptimalSolutionError()
        if config.load_solutions:
            if results.solution_status == SolutionStatus.noSolution:
                raise NoSolutionError()
            timer.start("load")
            results.solution_loader.load_solution()
            timer.stop("load")
        if (results.solution_status in (SolutionStatus.feasible, SolutionStatus.optimal)
                and solution is not None and solution.objective is not None):
            results.incumbent_objective = solution.objective
        mapping = self._engine.compiled.mapping if self._engine.compiled else None
        if mapping is not None and mapping.objective is not None:
            results.objective_bound = math.inf if mapping.sense < 0 else -math.inf
        results.solver_config = config
        results.timing_info.timer = timer
        results.timing_info.wall_time = time.perf_counter() - start
        return results

    def solve_scenarios(self, model, scenarios, *, load=None, tee=False,
                        solver_options=None, time_limit=None, client=None,
                        **more_solver_options):
        """Solve ``model`` once per scenario, all in one batched solve, without
        writing to the model unless ``load`` asks: ``scenarios`` a list of mappings
        ``{mutable Param (or ParamData, or its name): value}`` (indexed Params:
        ``{m.q: {index: value}}``); the other Params keep the model's values, every
        scenario starts from the model's current variable values.  Returns a
        :class:`~.scenario_results.ScenarioResults`, one result per scenario with this
        interface's enums (``pyomo.contrib.solver``'s TerminationCondition and
        SolutionStatus), objective, variable values, duals and iterations; nothing
        raises for a non-optimal scenario.  ``load=i`` writes scenario i into the
        model (its Param values, then the solution as ``solve`` loads one, import
        Suffixes included); so does ``results[i].load()`` later.  Solver options:
        the config's ``solver_options``, then ``solver_options``, then the keyword
        arguments (IPOPT's names).  ``client``: a ``dask.distributed.Client`` whose
        workers solve the scenarios in chunks (``caspar_backend.batch.distributed``;
        the same results).  Bad keys or values raise a ModelError naming the
        scenario and the component (:mod:`.scenarios`), before anything is solved."""
        opts = dict(self.config.solver_options.value())
        opts.update(solver_options or {})
        opts.update(more_solver_options)
        limit = self.config.time_limit if time_limit is None else time_limit
        return run_scenarios(self._engine, _CONTRIB_SCENARIOS, model, scenarios, opts,
                             limit, tee_streams=_tee_streams(tee), load=load,
                             client=client)

    @staticmethod
    def _fill(results, prep, out) -> None:
        row, res = out.row, out.result
        results.termination_condition = enum_member(TerminationCondition,
                                                    row.contrib_termination)
        results.solution_status = enum_member(SolutionStatus, row.contrib_solution)
        results.solver_log = out.log
        results.iteration_count = res.iterations
        extra = results.extra_info
        extra.iteration_count = res.iterations
        extra.solver_message = contrib_message(solve_message(row, res), row.ampl_code)
        extra.return_status = res.status
        unscaled = res.final_errors.get("unscaled", {})
        for key, name in (("dual", "dual_infeasibility"), ("constr", "constraint_violation"),
                          ("compl", "complementarity_error"), ("E0", "overall_nlp_error")):
            if key in unscaled:
                extra[name] = float(unscaled[key])
        extra.add("iteration_log", ConfigList([_record_dict(r) for r in res.history],
                                              visibility=ADVANCED_OPTION))
        timing = results.timing_info
        timing.extract_and_compile = prep.t_extract
        timing.solver = out.seconds
        for k, v in res.timings.items():
            timing[f"solver_{k}"] = float(v)


@final
class _ContribScenarios(ScenarioFlavour):
    """Statuses and loading of ``solve_scenarios`` as contrib's ``solve`` (final)."""

    def statuses(self, outcome) -> dict:
        if outcome.infeasible is not None:
            # as solve, when the NL writer finds a trivially infeasible row
            return {"termination_condition": TerminationCondition.provenInfeasible,
                    "solution_status": SolutionStatus.noSolution}
        row = outcome.row
        return {"termination_condition": enum_member(TerminationCondition,
                                                     row.contrib_termination),
                "solution_status": enum_member(SolutionStatus, row.contrib_solution)}

    def load(self, model, outcome, mapping) -> None:
        # as solve: every Var stale until the solution is loaded
        StaleFlagManager.mark_all_as_stale()
        CasparSolutionLoader(model, outcome.solution).load_solution()


_CONTRIB_SCENARIOS = _ContribScenarios()
