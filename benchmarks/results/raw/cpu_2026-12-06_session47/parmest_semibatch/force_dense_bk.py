"""Experiment: factorize every K of semibatch exp2 by caspar's dense Bunch-Kaufman (exact
inertia, no static term) -- what caspar does for N <= 48 -- by raising
caspar_backend.linsolve.dense_kkt.SMALL_PIVOTING_MAX_N past N = 1776 (general path only).
usage: python scratch/force_dense_bk.py [exp_index] [opt=value ...]"""
import sys, os, re, time
import pyomo.environ as pyo
sys.path.insert(0, os.path.dirname(__file__))
from semibatch_compare import build, parse_opt
import caspar_backend
from caspar_backend.linsolve import dense_kkt
dense_kkt.SMALL_PIVOTING_MAX_N = 4000
i = int(sys.argv[1]) if len(sys.argv) > 1 else 1
extra = dict(parse_opt(s) for s in sys.argv[2:])
m = build(i)
log = f"/tmp/helperA_caspar_exp{i+1}_densebk.log"
t0 = time.time()
res = pyo.SolverFactory("caspar").solve(m, load_solutions=False,
        options={"tol": 1e-8, "output_file": log, "compiled_path": "no", **extra})
txt = open(log).read()
print("status", res.solver.termination_condition, "iters", re.findall(r"Number of Iterations\.*:\s*(\d+)", txt),
      "obj", re.findall(r"Objective\.*:\s*\S+\s+(\S+)", txt), f"time {time.time()-t0:.1f}s")
