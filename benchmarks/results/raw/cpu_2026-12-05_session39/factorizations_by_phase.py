import sys, time, os
sys.path.insert(0, os.getcwd())
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
from caspar_backend import from_casadi
from caspar_backend.kkt.augmented import AugmentedKKT
seq=[]
of=AugmentedKKT.factorize
def fac(self):
    t=time.perf_counter(); r=of(self); seq.append((self.N, getattr(self,'eliminated_pivots',None) is not None, self.solver.pivoting, time.perf_counter()-t)); return r
AugmentedKKT.factorize=fac
name=sys.argv[1]
nlp,args=acopf_casadi(acopf_data(load_pglib(name))); args.pop('data')
prob = from_casadi(nlp)
r=prob.solve(x0=args['x0'],lbx=args['lbx'],ubx=args['ubx'],lbg=args['lbg'],ubg=args['ubg'],tol=1e-6, print_level=0)
print(r.status, r.iterations)
# compress runs
cur=None; cnt=0; tt=0
for N,e,p,t in seq:
    key=(N,e,p)
    if key!=cur:
        if cur: print(cur, cnt, f'{tt:.2f}s {1000*tt/cnt:.1f}ms')
        cur=key; cnt=0; tt=0
    cnt+=1; tt+=t
print(cur, cnt, f'{tt:.2f}s {1000*tt/cnt:.1f}ms')
