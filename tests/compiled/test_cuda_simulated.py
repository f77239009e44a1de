"""The CUDA batch kernel's plumbing without a GPU: numba-cuda's simulator
(NUMBA_ENABLE_CUDASIM=1, in a subprocess since the flag is read when numba.cuda is
imported) runs the global kernel of caspar_backend.compiled.cuda.launch as Python over
the retargeted device functions (caspar_backend.compiled.cuda.retarget) on per-instance
rows of one buffer, and each instance ends as its own solve_compiled: same status, same
iterations, same x and f (the simulator evaluates the same Python in double precision).
"""
import os
import subprocess
import sys

import pytest

pytest.importorskip("numba_cuda")
pytest.importorskip("casadi")

SCRIPT = r"""
import numpy as np
from caspar_backend import from_casadi
from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
from caspar_backend.compiled import solve_compiled
from caspar_backend.compiled.cuda import launch
from caspar_backend.compiled.kernels import slots
from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
from caspar_backend.compiled.options import option_vector, resolve
from caspar_backend.compiled.solve import layout_for

nlp, bounds = arm_ik()
pr = from_casadi(nlp, **bounds)
B, X0 = 3, np.array([0.1, 0.2, 0.3])
T = arm_targets(B, seed=1)
lbx, ubx = (np.asarray(bounds[k], float) * np.ones(3) for k in ("lbx", "ubx"))
lbg, ubg = (np.asarray(bounds[k], float) * np.ones(1) for k in ("lbg", "ubg"))
ubg_b = np.array([[2.5], [-10.0], [2.5]])          # instance 1 infeasible: ejected
lay = layout_for(pr, lbx, ubx, lbg, ubg)
Fall, Iall = np.tile(lay.Fb0, (B, 1)), np.tile(lay.Ib, (B, 1))
k = slots.FLOAT_SLOTS.index("P")
Fall[:, lay.FO[k]:lay.FO[k + 1]] = T
rows = lambda a: np.tile(a, (B, 1))
code, iters, fval = np.zeros(B, np.int64), np.zeros(B, np.int64), np.zeros(B)
opts, _ = resolve({"print_level": 0})
hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((B, OUT_SIZE))
launch.kernel()[1, B](Fall, lay.FO, Iall, lay.IO, option_vector(opts), rows(X0), rows(lbx),
                      rows(ubx), rows(lbg), ubg_b, hist, outs, code, iters, fval)
kx = slots.FLOAT_SLOTS.index("X")
assert code[1] < 0, code
for b in (0, 2):
    r = solve_compiled(pr, X0, T[b], print_level=0)
    assert (r.status, r.iterations) == ("Solve_Succeeded", int(iters[b])) and code[b] == 0
    assert fval[b] == r.f, (fval[b], r.f)
    assert np.array_equal(Fall[b, lay.FO[kx]:lay.FO[kx + 1]], r.x)
print("OK")
"""


def test_simulated_kernel_equals_solve_compiled():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1",
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=root,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout + p.stderr
