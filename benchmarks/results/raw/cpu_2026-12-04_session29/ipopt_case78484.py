import sys, time, json
sys.path.insert(0, "/work/main")
from benchmarks.cases import acopf_cases
from benchmarks.measure import _ipopt
t = time.perf_counter()
built = list(acopf_cases(10 ** 6, {"case78484_epigrids"}))[0].build()
print("model_s", time.perf_counter() - t, flush=True)
r = _ipopt(built[1], built[2], 1e-6, 3000, 20000)
print("RESULT", json.dumps(dict(status=r.status, iterations=r.iterations, f=r.f, build=r.build, solve=r.solve)), flush=True)
