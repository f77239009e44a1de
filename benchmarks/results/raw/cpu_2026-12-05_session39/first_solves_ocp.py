import sys, os, time, numpy as np
sys.path.insert(0, os.getcwd())
from caspar_backend.adapters.casadi.models import vanderpol_collocation, vanderpol_ocp
from caspar_backend import from_casadi
from caspar_backend.compiled.dispatch import kernels_ready
kernels_ready(wait=True)
for make in (vanderpol_ocp, vanderpol_collocation):
    for N in (1000, 10000, 30000):
        nlp,args=make(N)
        Q=from_casadi(nlp)
        args={k:v for k,v in args.items() if k in ('x0','lbx','ubx','lbg','ubg','p')}
        t=time.perf_counter(); b=Q.solve(**args, tol=1e-6, compiled_path='yes', print_level=0); tb=time.perf_counter()-t
        t=time.perf_counter(); a=Q.solve(**args, tol=1e-6, compiled_path='no', print_level=0); ta=time.perf_counter()-t
        t=time.perf_counter(); b2=Q.solve(**args, tol=1e-6, compiled_path='yes', print_level=0); tb2=time.perf_counter()-t
        print(f"{make.__name__:22s} N={N:6d} n+m {Q.n+Q.m:7d} first yes {tb:.3f}s ({b.extra.get('path')}) no {ta:.3f}s again yes {tb2:.3f}s its {a.iterations}/{b.iterations} x_eq={np.array_equal(a.x,b.x)}", flush=True)
