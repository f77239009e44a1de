import sys, os
sys.path.insert(0, '/tmp/pyodae')
import caspar_backend  # native path
from driver_logs import build
import pyomo.environ as pyo
import re
for k, opts in enumerate(({}, {"kkt_static_regularization": 0.0}, {"linear_solver": "pardisomkl"})):
    m = build("rk_optimization")
    f = f"/tmp/pyodae/rkv{k}.log"
    res = pyo.SolverFactory('caspar').solve(m, options=dict(opts, output_file=f, file_print_level=5, print_level=0))
    lines = [l for l in open(f).read().splitlines() if re.match(r"^ *\d+[r ] ", l)]
    print(opts, res.solver.termination_condition, len(lines) - 1, "iterations")
    print("\n".join(lines[1:3]))
