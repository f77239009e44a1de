import sys, time, json; sys.path.insert(0,'.')
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar
import caspar_backend.compiled.solve as S
if sys.argv[1] == "old":
    S.ITER_FIXED, S.ITER_PER_UNIT = 10e-6, 0.3e-6
out = {}; tt = 0.0; paths = {}
for bp in bank(include_slow=True):
    d = dict(bp.build(), options=bp.options)
    t = time.perf_counter()
    try:
        r = run_caspar(d, {}, public=True)
    except Exception as e:
        out[bp.name] = repr(e)[:80]; continue
    dt = time.perf_counter() - t; tt += dt
    out[bp.name] = [r.status, int(r.iterations), repr(float(r.f))]
    paths[bp.name] = (r.extra.get("path"), round(dt, 3))
json.dump(out, open(f"/tmp/cal/pub_{sys.argv[1]}.json", "w"))
json.dump(paths, open(f"/tmp/cal/pub_{sys.argv[1]}_paths.json", "w"))
print(sys.argv[1], "total", round(tt, 2))
