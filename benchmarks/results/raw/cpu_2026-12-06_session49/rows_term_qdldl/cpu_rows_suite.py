"""The benchmark runner with qdldl's rows' static term scaled by F, every solve on the general
path (dispatch.AUTO_MAX_SIZE = 0)."""
import runpy, sys
sys.path.insert(0, "/tmp/cr")
F = float(sys.argv.pop(1))
from caspar_backend.linsolve.qdldl import QDLDLSolver
import caspar_backend.compiled.dispatch as dispatch
QDLDLSolver.row_static_factor = F
dispatch.AUTO_MAX_SIZE = 0
sys.argv[0] = "benchmarks"
runpy.run_module("benchmarks", run_name="__main__", alter_sys=True)
