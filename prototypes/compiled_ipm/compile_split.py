"""Compile cost split: the evaluator alone (ev_zeroth/ev_first/ev_hess) vs the whole
solve, in a fresh Numba cache (a new process each)."""
import json, os, subprocess, sys, tempfile
HERE = os.path.dirname(os.path.abspath(__file__))
CODE = r'''
import time, sys, numpy as np
sys.path.insert(0, %r)
import caspar_backend
from caspar_backend.adapters.casadi.models import arm_ik
from proto.builder import SmallSolver
nlp, b = arm_ik(); problem = caspar_backend.from_casadi(nlp, **b)
s = SmallSolver(problem, b["lbx"], b["ubx"], b["lbg"], b["ubg"], backend=%r)
c0 = time.process_time(); t0 = time.perf_counter()
s.eval_all(np.array([0.1, 0.2, 0.3]), np.array([1.0, 0.5]), np.ones(1), 1.0)
print(time.perf_counter() - t0, time.process_time() - c0)
'''
for backend in ("interp", "codegen"):
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([sys.executable, "-c", CODE % (HERE, backend)], env=dict(os.environ, NUMBA_CACHE_DIR=d),
                           capture_output=True, text=True, check=True)
        w, c = map(float, r.stdout.split()[-2:])
        print(f"{backend:8s} evaluator only (ev_zeroth/first/hess + helpers), fresh cache: {w:.1f} s wall, {c:.1f} s CPU")
