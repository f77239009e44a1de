"""cuDSS configuration A/B on one PGLib case: per config a fresh problem, first solve +
re-solves; factorization ms per iteration, iterations, objective."""
import json, os, sys, time
os.environ["CASPAR_PROBLEM_CACHE"] = "0"
import caspar_backend as cb
from caspar_backend.linsolve import cudss_handle as ch
from benchmarks.cases import acopf_cases
from benchmarks.measure import phase_ms

case = sys.argv[1]
configs = json.loads(sys.argv[2])
orig = ch.CudssHandle._create
current = {}
seen = []
resolves = int(os.environ.get('RESOLVES', '2'))
def patched(self, *a, **k):
    orig(self, *a, **k)
    seen.append((self.n, self.nnz))
    for name, val in current.items():
        c = self._c
        p = getattr(c.ConfigParam, name)
        self._config_set(p, val)
ch.CudssHandle._create = patched
built = list(acopf_cases(10 ** 6, {case}))[0].build()
for cfg in configs:
    current.clear(); current.update(cfg)
    try:
        problem = cb.from_casadi(built[1], **built[2])
        problem.evaluator("cuda")
        rows = []
        for k in range(1 + resolves):
            t = time.perf_counter()
            r = problem.solve(tol=1e-6, print_level=0, max_iter=3000, device="cuda")
            rows.append((round(time.perf_counter() - t, 3), r.status, int(r.iterations), repr(float(r.f)),
                         {a: round(b, 3) for a, b in phase_ms(r).items()}, round(float(r.extra.get("analysis_seconds", 0)), 3)))
        print("CFG", case, json.dumps(cfg), "kkt n, nnz", seen[-1:], flush=True)
        for row in rows: print("   ", row, flush=True)
    except Exception as e:
        print("CFG", case, json.dumps(cfg), "FAILED", type(e).__name__, str(e)[:200], flush=True)
