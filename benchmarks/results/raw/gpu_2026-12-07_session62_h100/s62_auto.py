"""device='auto' break-even on this host (issue 21, item 3): warm solves (the best of the
second and third of each) of one compiled problem on the CPU (Problem.solve's default path
for its size) and on the GPU, from ~2,600 to ~150,000 variables + constraints.  The same
models as session 26's s26_auto.py, plus two between 5,000 and 10,000."""
import sys, time, json
sys.path.insert(0, '.')
devices = sys.argv[1].split(",") if len(sys.argv) > 1 else ["cpu", "cuda"]
if "cuda" in devices:
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
          ("vdp_ocp N=1500", lambda: vanderpol_ocp(1500)),
          ("vdp_colloc N=500", lambda: vanderpol_collocation(500)),
          ("vdp_ocp N=3000", lambda: vanderpol_ocp(3000)),
          ("vdp_colloc N=1000", lambda: vanderpol_collocation(1000)),
          ("vdp_colloc N=2000", lambda: vanderpol_collocation(2000)),
          ("vdp_ocp N=10000", lambda: vanderpol_ocp(10000)),
          ("vdp_colloc N=6000", lambda: vanderpol_collocation(6000)),
          ("vdp_ocp N=30000", lambda: vanderpol_ocp(30000))]
models += [(c, (lambda c=c: acopf(c))) for c in ("case118_ieee", "case300_ieee", "case500_goc",
                                                 "case793_goc", "case1354_pegase",
                                                 "case2000_goc", "case2853_sdet",
                                                 "case4661_sdet")]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10 ** 9
for name, make in models:
    nlp, args = make()
    P = cb.from_casadi(nlp, **args)
    if P.n + P.m > limit:
        continue
    r = dict(model=name, size=P.n + P.m)
    for dev in devices:
        times = []
        for k in range(3):
            t = time.perf_counter()
            res = P.solve(tol=1e-6, print_level=0, device=dev)
            times.append(time.perf_counter() - t)
        r[dev] = round(min(times[1:]), 4)
        r[dev + "_first"] = round(times[0], 4)
        r[dev + "_it"] = res.iterations
        r[dev + "_status"] = res.status
        r[dev + "_f"] = res.f
    if "cuda" in r and "cpu" in r:
        r["gpu_faster"] = r["cuda"] < r["cpu"]
    print(json.dumps(r), flush=True)
