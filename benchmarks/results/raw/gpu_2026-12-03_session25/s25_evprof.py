"""Warm process: from_casadi (problem cache hit) + evaluator('cuda') (cubin cached), profiled."""
import sys, time, cProfile, pstats
sys.path.insert(0, '.')
import cupy
cupy.zeros(1).sum()
from benchmarks.models.acopf import acopf_casadi_polar
from caspar_backend.adapters.casadi import from_casadi
nlp, _ = acopf_casadi_polar('case9241_pegase')
pr = cProfile.Profile()
t = time.perf_counter(); pr.enable()
P = from_casadi(nlp); t1 = time.perf_counter()
ev = P.evaluator('cuda'); cupy.cuda.Device().synchronize()
pr.disable(); t2 = time.perf_counter()
print(f"from_casadi {t1-t:.3f} evaluator {t2-t1:.3f} cache {P.model.meta.get('problem_cache')}")
if len(sys.argv) > 1:
    pstats.Stats(pr).sort_stats('cumtime').print_stats(45)
