"""The bank on the emulated device path (tests/solver/test_gpu_solver.py's emulation): per
problem [status, iterations, repr(f), equal to the CPU reference bit for bit]."""
import json, sys, os, types
sys.path.insert(0, os.getcwd())
import numpy as np, pytest
from tests.solver import test_gpu_solver as T
from tests.support.problem_bank import bank
from tests.support.solver_harness import _nlp
from caspar_backend import from_casadi
out = {}
for p in bank(include_slow=False):
    mp = pytest.MonkeyPatch()
    try:
        d = p.build()
        cp = from_casadi(_nlp(d))
        prob = types.SimpleNamespace(evaluator=cp.evaluator, lbx=d["lbx"], ubx=d["ubx"],
                                     lbg=d["lbg"], ubg=d["ubg"], x0=d["x0"])
        ref, res, seen = T._solve_emulated(prob, dict(p.options or {}), mp)
        same = (ref.status == res.status and ref.iterations == res.iterations
                and np.array_equal(ref.x, res.x) and np.array_equal(ref.lam_g, res.lam_g)
                and np.array_equal(ref.lam_x, res.lam_x))
        out[p.name] = [res.status, int(res.iterations), repr(float(res.f)), bool(same)]
    except Exception as e:
        out[p.name] = ["exception", repr(e)[:100]]
    finally:
        mp.undo()
    print(p.name, out[p.name], flush=True)
json.dump(out, open(sys.argv[1], "w"), indent=0)
