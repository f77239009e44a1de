import sys
sys.path.insert(0, "/work/main")
import pytest
from tests.solver import test_gpu_solver as T
from caspar_backend.solver.inertia import InertiaCorrector
from caspar_backend.solver import solve_nlp
from benchmarks.count_device_ops import build
mp = pytest.MonkeyPatch()
seq = []
orig = InertiaCorrector.finish_direction
def fd(self, *a):
    r = orig(self, *a); seq.append("P" if r[1] else "f"); return r
mp.setattr(InertiaCorrector, "finish_direction", fd)
for case in sys.argv[1:]:
    seq.clear()
    xp = T._emulate_device(mp)
    prob = build("acopf", case)
    ev = T._EmulatedEvaluator(prob.evaluator("cpu"), xp)
    r = solve_nlp(ev, prob.lbx, prob.ubx, prob.lbg, prob.ubg, prob.x0, options=dict(print_level=0))
    print(case, r.status, r.iterations, "".join(seq))
mp.undo()
