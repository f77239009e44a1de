import json, os, sys, time
sys.path.insert(0, os.getcwd())
import caspar_backend as cb
from benchmarks.cases import cops_cases
out = {}
for c in cops_cases("1"):
    b = c.build()
    prob = cb.from_pyomo(b[1])
    t = time.perf_counter()
    r = prob.solve(tol=1e-6, print_level=0, max_iter=3000, device="cpu", compiled_path="no")
    out[c.name] = [r.status, int(r.iterations), repr(float(r.f))]
    print(c.name, out[c.name], round(time.perf_counter() - t, 2), flush=True)
    json.dump(out, open(sys.argv[1], "w"), indent=0)
