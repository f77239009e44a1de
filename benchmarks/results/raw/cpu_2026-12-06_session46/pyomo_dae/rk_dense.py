import sys, re
sys.path.insert(0, '/tmp/pyodae')
import caspar_backend
import caspar_backend.linsolve.qdldl as Q
Q.DENSE_PIVOTING_MAX_N = 2000
from driver_logs import build
import pyomo.environ as pyo
for o in ({"compiled_path": "no"},):
    m = build("rk_optimization")
    f = "/tmp/pyodae/rk_dense.log"
    res = pyo.SolverFactory('caspar').solve(m, options=dict(o, output_file=f, file_print_level=5, print_level=0))
    lines = [l for l in open(f).read().splitlines() if re.match(r"^ *\d+[r ]", l)]
    print(o, res.solver.termination_condition, len(lines) - 1, lines[1:3])
