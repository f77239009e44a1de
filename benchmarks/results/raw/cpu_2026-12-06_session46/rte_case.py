import sys, time
sys.path.insert(0, ".")
from benchmarks.cases import acopf_cases
import caspar_backend as cb
name = sys.argv[1]
for case in acopf_cases(2000, variants=("typ",), names=None, min_buses=1900):
    if name not in case.name and name not in case.size: continue
    built = case.build()
    kind, nlp, args = built[0], built[1], built[2]
    P = cb.from_casadi(nlp, **args)
    for k in range(int(sys.argv[2]) if len(sys.argv) > 2 else 1):
        t = time.perf_counter()
        r = P.solve(tol=1e-6, print_level=0, max_iter=3000, device="cpu")
        print(case.name, case.size, r.status, r.iterations, repr(r.f), round(time.perf_counter() - t, 2), flush=True)
