"""Per source line executions of the kernels for one Van der Pol instance (NUMBA_DISABLE_JIT=1)."""
import os, sys, collections, time, json
import numpy as np
sys.path.insert(0, os.getcwd())
assert os.environ.get("NUMBA_DISABLE_JIT") == "1"
from benchmarks.bench_batch import vdp_workload, ik_workload
from caspar_backend import from_casadi
w = ik_workload(1000, seed=2) if os.environ.get("CASE") == "ik" else vdp_workload(1000)
idx = int(sys.argv[1]); out = sys.argv[2]
P = from_casadi(w.nlp, **w.args)
from caspar_backend.batch.inputs import batch_inputs
from caspar_backend.compiled.cuda.group import group_layout
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
from caspar_backend.compiled.kernels.solve_many import solve_rows
from caspar_backend.compiled.options import option_vector, resolve
sub = batch_inputs(P, 1, p=w.params[idx:idx+1])
lay = group_layout(P, sub)
O = option_vector(resolve({"print_level": 0, "tol": 1e-8})[0]).copy()
hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((1, OUT_SIZE))
code, iters, fval = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
ws = DeviceWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, xp=np)
cnt = collections.Counter()
KEY = "caspar_backend/compiled/"
def tr(frame, event, arg):
    if KEY in frame.f_code.co_filename:
        def local(frame, event, arg):
            if event == "line":
                cnt[(frame.f_code.co_filename, frame.f_lineno)] += 1
            return local
        return local
    return None
t = time.time()
sys.settrace(tr)
solve_rows(ws.Fall, ws.FO, ws.Iall, ws.IO, O, ws.X0, ws.LBX, ws.UBX, ws.LBG, ws.UBG, hist, outs, code, iters, fval)
sys.settrace(None)
print("code", code, "iters", iters, "f", fval, time.time()-t)
json.dump({"iters": int(iters[0]), "counts": [[f, l, c] for (f, l), c in cnt.items()]}, open(out, "w"))
