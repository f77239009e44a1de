"""case9241_pegase (the suite's AC-OPF) on the GPU: where a solve's time goes outside the
iterations (wall vs the solver's timers), first solve and re-solves; cProfile of a re-solve."""
import sys, time, cProfile, pstats
sys.path.insert(0, '.')
import cupy
cupy.zeros(1).sum()
from benchmarks.models.acopf import acopf_casadi, acopf_data
from benchmarks.models.matpower import load_pglib
import caspar_backend as cb
from benchmarks.cuda_counters import snapshot, difference
if len(sys.argv) > 2:
    from caspar_backend.gpu_warmup import general_path
    print('gpu warmup', general_path())
case = sys.argv[1] if len(sys.argv) > 1 else 'case9241_pegase'
t = time.perf_counter()
nlp, args = acopf_casadi(acopf_data(load_pglib(case))); args.pop('data', None)
P = cb.from_casadi(nlp, **args); t1 = time.perf_counter()
ev = P.evaluator('cuda'); cupy.cuda.Device().synchronize(); t2 = time.perf_counter()
print(f"{case}: build {t1-t:.2f} s, evaluator {t2-t1:.2f} s")
for k in range(3):
    pr = cProfile.Profile() if k == 2 else None
    t = time.perf_counter()
    if pr: pr.enable()
    c0 = snapshot()
    r = P.solve(tol=1e-6, print_level=0, device='cuda')
    c = difference(c0, snapshot())
    if pr: pr.disable()
    w = time.perf_counter() - t
    tm = {a: round(b, 4) for a, b in r.timings.items()}
    print(f"solve {k}: wall {w:.3f} it {r.iterations} {r.status} analysis {r.extra.get('analysis_seconds') if isinstance(r.extra, dict) else None} timings {tm}")
    if c: print('  per iteration:', {k: round(v / r.iterations, 1) for k, v in c.items() if v is not None})
pstats.Stats(pr).sort_stats('cumtime').print_stats(50)
