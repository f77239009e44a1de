"""Load Pyomo's parametrized contrib-solver suite with caspar in ipopt's place.

``pyomo/contrib/solver/tests/solvers/test_solvers.py`` picks its solvers from
module-level lists (``all_solvers``, ``nlp_solvers``, ``dual_solvers``, ...) that
its ``parameterized.expand`` decorators read at import time, so the lists cannot be
patched after import.  We therefore load the installed file's text as a new module
after two textual substitutions:

* every ``('ipopt', Ipopt)`` list entry becomes ``('caspar', CasparSolver)``: the
  suite then runs each test caspar would run as "an NLP solver like ipopt";
* ``isinstance(opt, Ipopt)`` checks also accept caspar: caspar promises IPOPT's
  user-visible behaviour (locallyInfeasible, last iterate on failure), so the
  ipopt-specific expectations are the right ones.

``nl_solvers`` (NL-writer presolve variants) no longer names ipopt after the
substitution: caspar does not go through the NL writer.
"""

from __future__ import annotations

import importlib.util
import sys
import types


def load(module_name: str = "caspar_contrib_test_solvers") -> types.ModuleType:
    if module_name in sys.modules:
        return sys.modules[module_name]
    import pyomo.environ  # noqa: F401
    import caspar_backend  # noqa: F401
    from caspar_backend.adapters.pyomo.plugin import CasparSolver

    spec = importlib.util.find_spec("pyomo.contrib.solver.tests.solvers.test_solvers")
    with open(spec.origin) as fh:
        text = fh.read()
    assert "('ipopt', Ipopt)" in text, "Pyomo's suite changed layout"
    text = text.replace("('ipopt', Ipopt)", "('caspar', CasparSolver)")
    # the NL-writer list keeps no real entry (its presolve variants poke
    # writer_config); parameterized refuses an empty list, hence a placeholder
    text = text.replace("nl_solvers = [('caspar', CasparSolver)]", "nl_solvers = [('_none_', None)]")
    text = text.replace("isinstance(opt, Ipopt)", "isinstance(opt, (Ipopt, CasparSolver))")
    mod = types.ModuleType(module_name)
    mod.__file__ = spec.origin
    mod.CasparSolver = CasparSolver
    sys.modules[module_name] = mod
    exec(compile(text, spec.origin, "exec"), mod.__dict__)
    return mod
