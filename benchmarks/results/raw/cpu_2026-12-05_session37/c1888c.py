import sys, numpy as np
sys.path.insert(0, '/work/main')
junk = [np.empty(int(sys.argv[1]) + k) for k in range(50)]   # shift the heap
import caspar_backend as cb
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
nlp, args = acopf_casadi(acopf_data(load_pglib('case1888_rte')))
P = cb.from_casadi(nlp)
kw = {k: args[k] for k in ('x0', 'lbx', 'ubx', 'lbg', 'ubg') if k in args}
r = P.solve(print_level=0, tol=1e-6, compiled_path='no', **kw)
print(sys.argv[1:], r.status, r.iterations, r.f)
