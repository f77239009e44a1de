"""The results of ``solve_scenarios``: one :class:`ScenarioResult` per scenario, in a
list-like :class:`ScenarioResults`.

Per scenario (signs as a normal solve reports them, :mod:`.results`):

    index                  int          position in the scenario list
    params                 ComponentMap ParamData -> float: the scenario's values
    termination_condition  Pyomo enum   the interface's TerminationCondition (legacy
                                        ``pyomo.opt`` or ``pyomo.contrib.solver``)
    solver_status          Pyomo enum   legacy ``SolverStatus`` (None for contrib)
    solution_status        Pyomo enum   the interface's SolutionStatus
    status, message        str          caspar's (IPOPT's) status name and message
    iterations             int          interior-point iterations (0 when not solved)
    objective              float|None   the objective at the final iterate (None
                                        without an iterate or an objective)
    values                 ComponentMap VarData -> float, the variables caspar solved for
    duals                  ComponentMap ConstraintData -> float, Pyomo's ``dual``
    reduced_costs          ComponentMap VarData -> float, Pyomo's ``rc``
    path, reason           str          how the batch solved it (BatchResult's fields)

``values``, ``duals`` and ``reduced_costs`` are empty without an iterate.
``results[i].load()`` writes scenario i into the model as a normal solve with those
Param values would have left it: the Params set to the scenario's values, the variable
values and the model's import Suffixes (``dual``, ``rc``, ``ipopt_zL_out``,
``ipopt_zU_out``) loaded by the interface's own loading rules (legacy:
``model.solutions.load_from``, with its warnings and errors for bad statuses;
contrib: the solution loader).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import final

import numpy as np


class ScenarioFlavour(ABC):
    """Abstract: how one Pyomo interface (legacy ``pyomo.opt`` or
    ``pyomo.contrib.solver``) names a scenario's statuses and loads its solution,
    as its own ``solve`` does."""

    @abstractmethod
    def statuses(self, outcome) -> dict:
        """``{'termination_condition', 'solution_status'[, 'solver_status']}``: the
        interface's enum members for a
        :class:`~.scenarios.ScenarioOutcome`."""

    @abstractmethod
    def load(self, model, outcome, mapping) -> None:
        """Load the outcome's solution (not None) into ``model`` with the interface's
        loading rules."""


@final
class ScenarioResult:
    """One scenario's result (final); fields in the module doc."""

    def __init__(self, outcome, model, mapping, flavour):
        self._outcome, self._model, self._mapping = outcome, model, mapping
        self._flavour = flavour
        from pyomo.common.collections import ComponentMap

        o = outcome
        self.index = o.index
        self.params = ComponentMap(o.assignments)
        st = flavour.statuses(o)
        self.termination_condition = st["termination_condition"]
        self.solver_status = st.get("solver_status")
        self.solution_status = st["solution_status"]
        self.status, self.message, self.iterations = o.status, o.message, o.iterations
        self.path, self.reason = o.path, o.reason
        sol = o.solution
        self.objective = None if sol is None else sol.objective
        pairs = (lambda keys, vals: ComponentMap(zip(keys, np.asarray(vals).tolist())))
        if sol is None:
            self.values, self.duals, self.reduced_costs = (ComponentMap(), ComponentMap(),
                                                           ComponentMap())
        else:
            self.values = pairs(sol.variables, sol.x)
            self.duals = pairs(sol.constraints, sol.dual)
            self.reduced_costs = pairs(sol.variables, sol.rc_ipopt_style())

    @property
    def success(self) -> bool:
        """The solver reached an optimal (or acceptable) point."""
        return self._outcome.row.solution_status == "optimal" and \
            self._outcome.solution is not None

    def value(self, var) -> float:
        """The value of a variable (VarData, scalar Var or its name) in this
        scenario's solution; KeyError for a variable caspar did not solve for (fixed,
        or in no active constraint or objective) or when there is no iterate."""
        if isinstance(var, str):
            find = getattr(self._model, "find_component", None)
            v = find(var) if find else getattr(self._model, var, None)
        else:
            v = var
        if v is None or v not in self.values:
            name = var if isinstance(var, str) else getattr(var, "name", repr(var))
            raise KeyError(f"scenario {self.index} has no value for {name} (not a "
                           "variable caspar solved for, or no iterate)")
        return self.values[v]

    def load(self, model=None, params: bool = True) -> None:
        """Write this scenario into ``model`` (default: the model solved): with
        ``params`` its Param values, then the solution as the interface's ``solve``
        loads one (see the module doc).  ValueError without an iterate."""
        model = self._model if model is None else model
        if self._outcome.solution is None:
            raise ValueError(f"scenario {self.index} has no solution to load ({self.status}"
                             f": {self.message})")
        if params:
            for pd, v in self._outcome.assignments:
                pd.value = v
        self._flavour.load(model, self._outcome, self._mapping)

    def __repr__(self) -> str:
        return (f"ScenarioResult({self.index}: {self.termination_condition}, "
                f"objective={self.objective})")


@final
class ScenarioResults(Sequence):
    """The scenarios' results in scenario order (final), a read-only sequence of
    :class:`ScenarioResult`, plus ``objectives`` (float64 (B,), NaN where there is no
    iterate or objective), ``solver_log`` (every solved scenario's log), ``wall_time``
    (seconds of the batched solve), ``t_extract`` (validation and compilation) and
    ``batch`` (the :class:`~caspar_backend.batch.result.BatchResult` of the scenarios
    that were solved, None when none was)."""

    def __init__(self, items: list, batch, solver_log: str, wall_time: float,
                 t_extract: float):
        self._items = list(items)
        self.batch, self.solver_log = batch, solver_log
        self.wall_time, self.t_extract = wall_time, t_extract

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]

    @property
    def objectives(self) -> np.ndarray:
        return np.array([np.nan if r.objective is None else r.objective
                         for r in self._items], dtype=float)

    def load(self, i: int, model=None, params: bool = True) -> None:
        """``self[i].load(model, params)``."""
        self._items[i].load(model, params)

    def __repr__(self) -> str:
        ok = sum(r.success for r in self._items)
        return f"ScenarioResults({len(self)} scenarios, {ok} solved to optimality)"
