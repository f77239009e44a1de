"""case78484_epigrids (the suite's AC-OPF) on the GPU: model construction, from_casadi
(cold: empty problem cache), evaluator, first solve and a re-solve with the solver's
per-phase timers and the launches per iteration."""
import sys, time
sys.path.insert(0, '.')
import cupy
cupy.zeros(1).sum()
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
import caspar_backend as cb
from benchmarks.cuda_counters import snapshot, difference
case = sys.argv[1] if len(sys.argv) > 1 else 'case78484_epigrids'
t = time.perf_counter()
nlp, args = acopf_casadi(acopf_data(load_pglib(case))); args.pop('data', None)
t0 = time.perf_counter()
P = cb.from_casadi(nlp, **args); t1 = time.perf_counter()
ev = P.evaluator('cuda'); cupy.cuda.Device().synchronize(); t2 = time.perf_counter()
print(f"{case}: n {P.n} m {P.m} groups {len(P.groups) if hasattr(P, 'groups') else '?'}; model {t0-t:.2f} s, from_casadi {t1-t0:.2f} s, evaluator {t2-t1:.2f} s", flush=True)
for k in range(2):
    t = time.perf_counter()
    c0 = snapshot()
    r = P.solve(tol=1e-6, print_level=0, device='cuda')
    c = difference(c0, snapshot())
    w = time.perf_counter() - t
    tm = {a: round(b, 3) for a, b in r.timings.items()}
    per = {a: round(1e3 * b / max(r.iterations, 1), 2) for a, b in r.timings.items()}
    print(f"solve {k}: wall {w:.3f} it {r.iterations} {r.status} f {r.f!r} analysis {r.extra.get('analysis_seconds')} timings {tm}\n  ms/it {per}", flush=True)
    if c: print('  per iteration:', {a: round(v / r.iterations, 1) for a, v in c.items() if v is not None}, flush=True)
