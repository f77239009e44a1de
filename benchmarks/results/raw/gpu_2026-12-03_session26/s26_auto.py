"""device='auto' break-even on this host: warm solves (the second of each) of the same
compiled problem on the CPU (Problem.solve's default path for its size) and on the GPU,
from ~2,000 to ~50,000 variables + constraints."""
import sys, time, json
sys.path.insert(0, '.')
import cupy
cupy.zeros(1).sum()
import caspar_backend as cb
from caspar_backend.adapters.casadi.models import vanderpol_ocp, vanderpol_collocation
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib


def acopf(case):
    nlp, args = acopf_casadi(acopf_data(load_pglib(case))); args.pop('data', None)
    return nlp, args


models = [("vdp_ocp N=1000", lambda: vanderpol_ocp(1000)),
          ("vdp_colloc N=500", lambda: vanderpol_collocation(500)),
          ("vdp_ocp N=3000", lambda: vanderpol_ocp(3000)),
          ("vdp_colloc N=2000", lambda: vanderpol_collocation(2000)),
          ("vdp_ocp N=10000", lambda: vanderpol_ocp(10000))]
models += [(c, (lambda c=c: acopf(c))) for c in ("case118_ieee", "case300_ieee", "case500_goc",
                                                 "case793_goc", "case1354_pegase",
                                                 "case2000_goc")]
rows = []
for name, make in models:
    nlp, args = make()
    P = cb.from_casadi(nlp, **args)
    r = dict(model=name, size=P.n + P.m)
    for dev in ("cpu", "cuda"):
        times = []
        for k in range(2):
            t = time.perf_counter()
            res = P.solve(tol=1e-6, print_level=0, device=dev)
            times.append(time.perf_counter() - t)
        r[dev] = round(times[1], 4)
        r[dev + "_it"] = res.iterations
        r[dev + "_status"] = res.status
    r["gpu_faster"] = r["cuda"] < r["cpu"]
    print(json.dumps(r), flush=True)
    rows.append(r)
