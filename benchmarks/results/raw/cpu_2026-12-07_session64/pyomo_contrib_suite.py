"""Pyomo's own tests of its pyomo.contrib.solver interfaces
(pyomo/contrib/solver/tests/solvers/test_solvers.py of the installed Pyomo) with caspar in
IPOPT's place: writes OUT/test_solvers_caspar.py where every solver list holds
('caspar', CasparSolver) instead of ('ipopt', Ipopt); the tests'
IPOPT-specific expectations apply to caspar too (it is IPOPT's algorithm).  Run:
python pyomo_contrib_suite.py OUT && cd OUT && python -m pytest -q test_solvers_caspar.py"""
import os
import sys

import pyomo.contrib.solver.tests.solvers.test_solvers as T

out = sys.argv[1]
s = open(T.__file__).read()
s = s.replace("    ('ipopt', Ipopt),\n", "    ('caspar', CasparSolver),\n")
# the tests' IPOPT-specific expectations (a local solver's locallyInfeasible, the last
# iterate loadable after a failure, time_limit) are caspar's too: it is IPOPT's algorithm
s = s.replace("isinstance(opt, Ipopt)", "isinstance(opt, (Ipopt, CasparSolver))")

s = s.replace("from pyomo.contrib.solver.solvers.ipopt import Ipopt\n",
              "from pyomo.contrib.solver.solvers.ipopt import Ipopt\n"
              "from caspar_backend.adapters.pyomo.contrib import CasparSolver\n")
os.makedirs(out, exist_ok=True)
open(os.path.join(out, "test_solvers_caspar.py"), "w").write(s)
