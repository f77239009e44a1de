"""Session 63: answers on the GPU, one tree (cwd): the bank (device='cuda') and PGLib typical
cases up to MAX buses; JSON {name: [status, iterations, repr(f)]} to argv[1]."""
import json, os, sys, time
sys.path.insert(0, os.getcwd())
out, path, budget = {}, sys.argv[1], float(sys.argv[2])
t0 = time.perf_counter()
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar
for p in bank(include_slow=False):
    if time.perf_counter() - t0 > budget / 2:
        break
    try:
        r = run_caspar(dict(p.build(), options=p.options), {"device": "cuda"})
        out["bank/" + p.name] = [r.status, int(r.iterations), repr(float(r.f))]
    except Exception as e:
        out["bank/" + p.name] = ["error", repr(e)[:80]]
import caspar_backend as cb
from benchmarks.cases import acopf_cases
for c in acopf_cases(int(sys.argv[3])):
    if time.perf_counter() - t0 > budget:
        break
    b = c.build()
    prob = cb.from_casadi(b[1], **b[2])
    r = prob.solve(tol=1e-6, print_level=0, max_iter=3000, device="cuda")
    out["pglib/" + c.name] = [r.status, int(r.iterations), repr(float(r.f))]
    json.dump(out, open(path, "w"), indent=0)
json.dump(out, open(path, "w"), indent=0)
print(len(out), "answers in", round(time.perf_counter() - t0, 1), "s")
