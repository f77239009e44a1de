"""CasADi's own OCP tests (test/python/ocp.py of a CasADi checkout) with caspar in IPOPT's
place: writes CASADI/test/python/caspar/ocp.py where casadi.nlpsol(name, 'ipopt', ...)
builds caspar's nlpsol with the same options (caspar reads 'ipopt.*' as its own).  Run:
python casadi_ocp_suite.py CASADI/test/python && cd CASADI/test/python/caspar &&
PYTHONPATH=<caspar repo>:.. python ocp.py"""
import os
import sys

here = sys.argv[1]
s = open(os.path.join(here, "ocp.py")).read()
i = s.index("class OCPtests")
s = s[:i] + '''import caspar_backend.casadi as _cb
_casadi_nlpsol = ca.nlpsol
def _nlpsol(name, solver, *a, **k):
    if solver != "ipopt":
        return _casadi_nlpsol(name, solver, *a, **k)
    return _cb.nlpsol(name, "caspar", *a, **k)
ca.nlpsol = _nlpsol

''' + s[i:]
os.makedirs(os.path.join(here, "caspar"), exist_ok=True)
open(os.path.join(here, "caspar", "ocp.py"), "w").write(s)
