"""Register caspar as a case in Pyomo's own solver-test registry.

Pyomo's ``pyomo.solvers.tests`` drivers (test_writers, test_pickle,
test_no_solution_behavior) build their test methods at import time from
``pyomo.solvers.tests.solvers.test_solver_cases()``; a solver is only exercised if
it has an entry there.  We add ``('caspar', 'python')`` with IPOPT's capability set
(caspar is a continuous NLP solver exactly like ipopt) *before* those modules are
imported.  'python' is the io name Pyomo uses for in-process solvers (no file
format), which is what caspar is: ``problem_format()`` is None.
"""

from __future__ import annotations

CAPABILITIES = {"linear", "quadratic_objective", "quadratic_constraint"}


def install(import_suffixes=("dual",)):
    import pyomo.environ  # noqa: F401  (registers plugins; caspar hooks in after)
    import caspar_backend  # noqa: F401
    from pyomo.solvers.tests import solvers as _solvers

    cases = _solvers._test_solver_cases
    if not cases:
        _solvers.test_solver_cases()        # populate Pyomo's own entries first
    if ("caspar", "python") not in cases:
        cases["caspar", "python"] = _solvers.initialize(
            name="caspar", io="python", capabilities=set(CAPABILITIES),
            import_suffixes=list(import_suffixes))
    return cases["caspar", "python"]
