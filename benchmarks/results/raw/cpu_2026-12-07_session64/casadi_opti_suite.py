"""CasADi's own Opti test suite (test/python/optistack.py of a CasADi checkout) with caspar
as its NLP solver: writes CASADI/test/python/caspar/optistack.py (the suite checks that
messages name the file 'optistack.py'), with casadi.Opti replaced by
caspar_backend.casadi.Opti and every Opti solver named 'ipopt' (or the suite's
nlpsolver) named 'caspar' (the same options: caspar reads IPOPT's names).  casadi's own
nlpsol calls stay IPOPT (the suite's references).  Run: python casadi_opti_suite.py
CASADI/test/python && cd CASADI/test/python/caspar && PYTHONPATH=<caspar repo>:.. python
optistack.py"""
import os
import re
import sys

here = sys.argv[1]
s = open(os.path.join(here, "optistack.py")).read()
i = s.index("class OptiStacktests")
s = s[:i] + '''import caspar_backend.casadi as _cb
ca.Opti = _cb.Opti
c.Opti = _cb.Opti
nlpsolver = "caspar"
nlpsolver_options = {}

''' + s[i:]
s = re.sub(r"""opti\.solver\((['"])ipopt\1""", "opti.solver('caspar'", s)
os.makedirs(os.path.join(here, "caspar"), exist_ok=True)
open(os.path.join(here, "caspar", "optistack.py"), "w").write(s)
