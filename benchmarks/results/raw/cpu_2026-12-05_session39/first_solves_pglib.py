import sys, os, time, numpy as np
sys.path.insert(0, os.getcwd())
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
from caspar_backend import from_casadi
from caspar_backend.compiled.dispatch import kernels_ready
kernels_ready(wait=True)
import caspar_backend.compiled.solve as cs
for name in sys.argv[1:]:
    nlp,args=acopf_casadi(acopf_data(load_pglib(name))); args.pop('data')
    P=from_casadi(nlp)
    t=time.perf_counter(); lay=cs.layout_for(P, *(np.array(v,float) for v in (args['lbx'],args['ubx'],args['lbg'],args['ubg']))); tl=time.perf_counter()-t
    Q=from_casadi(nlp)
    t=time.perf_counter(); b=Q.solve(**args, tol=1e-6, compiled_path='yes', print_level=0); tb=time.perf_counter()-t
    t=time.perf_counter(); a=Q.solve(**args, tol=1e-6, compiled_path='no', print_level=0); ta=time.perf_counter()-t
    t=time.perf_counter(); b2=Q.solve(**args, tol=1e-6, compiled_path='yes', print_level=0); tb2=time.perf_counter()-t
    print(f"{name:26s} n+m {P.n+P.m:7d} layout {tl:.3f}s  first yes {tb:.3f}s ({b.extra.get('path')}) no {ta:.3f}s  again yes {tb2:.3f}s  its {a.iterations}/{b.iterations} x_eq={np.array_equal(a.x,b.x)}", flush=True)
