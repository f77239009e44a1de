"""CasADi's own nlpsol test suite (test/python/nlp.py of a CasADi checkout) with caspar as
its only solver: writes nlp_caspar.py beside nlp.py, its solver list replaced by
[("caspar", {...}, {"codegen": False, "discrete": False})] and casadi.nlpsol routed to
caspar_backend.casadi.nlpsol for 'caspar', casadi.Opti to caspar_backend.casadi.Opti.
Run: python casadi_nlp_suite.py CASADI/test/python && cd CASADI/test/python &&
PYTHONPATH=<caspar repo> python nlp_caspar.py"""
import os
import sys

here = sys.argv[1]
s = open(os.path.join(here, "nlp.py")).read()
i = s.index("print(solvers)")
s = s[:i] + '''import caspar_backend.casadi as _cb
_orig_nlpsol = ca.nlpsol
def _nlpsol(name, solver, *a, **k):
    if solver == "caspar":
        return _cb.nlpsol(name, solver, *a, **k)
    return _orig_nlpsol(name, solver, *a, **k)
ca.nlpsol = _nlpsol
nlpsol = _nlpsol
ca.Opti = _cb.Opti          # casadi.Opti with solver('caspar', ...)
solvers = [("caspar", {"print_time": False, "caspar": {"tol": 1e-10, "print_level": 0}},
            {"codegen": False, "discrete": False})]
''' + s[i:]
open(os.path.join(here, "nlp_caspar.py"), "w").write(s)
