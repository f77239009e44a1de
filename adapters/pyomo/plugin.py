"""``SolverFactory('caspar')``: caspar in Pyomo's two solver interfaces.

* :class:`CasparSolver` -- ``pyomo.contrib.solver`` (``SolverBase``):
  ``solve(model, tee=..., load_solutions=..., raise_exception_on_nonoptimal_result=...,
  time_limit=..., solver_options=...) -> Results``, as ``contrib``'s ipopt;
* :class:`LegacyCasparSolver` -- ``pyomo.environ.SolverFactory('caspar')`` (an
  ``OptSolver``): ``solve(model, tee=..., load_solutions=..., options=...,
  timelimit=...) -> SolverResults`` with the status pairs, suffixes and loading
  behaviour of ``SolverFactory('ipopt')``.

Both also have ``solve_scenarios(model, scenarios, load=None, ...)``: the model solved
for many values of its mutable Params in one batched solve, per-scenario results, the
model untouched unless a scenario is loaded (:mod:`.scenarios`,
:mod:`.scenario_results`).

Modules: :mod:`.engine` (options, the compiled-problem cache, the solve),
:mod:`.contrib` and :mod:`.legacy` (the two interfaces); this module registers
them.  Both run the same :class:`~.engine._Engine`:

    Pyomo model --pyomo_to_model--> NLPModel --Problem--> compiled problem   (cached)
         ^                               refresh(): p, bounds, x0 from the model
         |                                              |
         +---- values, Suffixes <-- PyomoSolution <-- solve_nlp (IPOPT's algorithm)

The compiled problem is kept between solves of the same model and reused as
long as the model's structure is unchanged (same active objective and
constraint objects with the same expression objects, same named Expressions,
no Var fixed, unfixed or made discrete); mutable Params, fixed-Var values and
bounds are re-read every solve, so changing them costs no recompilation.

Everything is validated before the model is touched: a bad model, a bad option
or inconsistent bounds raise an error naming the component and leave values and
stale flags exactly as they were.

Options are IPOPT's names (:mod:`caspar_backend.solver.options`); the front-end
consumes a few more that Pyomo users set for IPOPT (:data:`FRONTEND_OPTIONS`).
"""

from __future__ import annotations

# the classes live in .contrib / .legacy and the shared machinery in .engine;
# re-exported here, the module Pyomo users and caspar_backend._pyomo_hook import
from caspar_backend._pyomo_alias import DOC, register_v2_alias

from .contrib import CasparConfig, CasparResults, CasparSolutionLoader, CasparSolver
from .engine import FRONTEND_OPTIONS, REFUSED_OPTIONS, SOLVER_NAME, VERSION, split_options
from .legacy import LegacyCasparSolver
from .results import STATUS_MAP


# ================================================================ registration


def register() -> None:
    """Register ``'caspar'`` with ``pyomo.contrib.solver``'s SolverFactory and, through
    it, the legacy ``pyomo.opt`` SolverFactory (idempotent; replaces the deferred
    entries :mod:`caspar_backend._pyomo_hook` registers)."""
    from pyomo.contrib.solver.common.factory import SolverFactory

    if SOLVER_NAME in SolverFactory and SolverFactory.get_class(SOLVER_NAME) is CasparSolver:
        return
    SolverFactory.register(SOLVER_NAME, legacy_name=SOLVER_NAME, doc=DOC
                           )(CasparSolver, LegacyCasparSolver)
    register_v2_alias(LegacyCasparSolver)


# as every Pyomo solver plugin: importing the module registers it
register()

__all__ = ["CasparSolver", "LegacyCasparSolver", "CasparConfig", "CasparResults",
           "CasparSolutionLoader", "register", "split_options", "FRONTEND_OPTIONS",
           "REFUSED_OPTIONS", "STATUS_MAP", "VERSION"]
