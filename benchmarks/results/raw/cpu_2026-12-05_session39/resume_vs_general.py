import sys, os, time, numpy as np
sys.path.insert(0, os.getcwd())
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
from caspar_backend import from_casadi
import caspar_backend.compiled.resume as cr, caspar_backend.compiled.solve as cs
seen=[]; orig=cr.resume_point
def rp(*a):
    r=orig(*a); seen.append(None if r is None else r.iteration); return r
cs.resume_point=rp
for name in sys.argv[1:]:
    nlp,args=acopf_casadi(acopf_data(load_pglib(name))); args.pop('data')
    P=from_casadi(nlp)
    res={}
    for cp in ('yes','no','yes','no'):
        seen.clear()
        t=time.perf_counter(); r=P.solve(**args, tol=1e-6, compiled_path=cp, print_level=0); dt=time.perf_counter()-t
        if cp not in res or dt < res[cp][1]: res[cp]=(r,dt,list(seen))
    (a,ta,_),(b,tb,sb)=res['no'],res['yes']
    print(f"{name:26s} resumed_at={sb} no {a.status[:15]} {a.iterations} {ta:.3f}s | yes {b.status[:15]} {b.iterations} {tb:.3f}s ratio {tb/ta:.2f} x_eq={np.array_equal(a.x,b.x)} counts_eq={a.counts==b.counts} path={b.extra.get('path')}", flush=True)
