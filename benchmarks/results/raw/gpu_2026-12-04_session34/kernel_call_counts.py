import os, sys, collections, time
import numpy as np
sys.path.insert(0, os.getcwd())
from benchmarks.bench_batch import vdp_workload
from caspar_backend import from_casadi
w = vdp_workload(1000)
if os.environ.get("NUMBA_DISABLE_JIT") != "1":
    P = from_casadi(w.nlp, **w.args)
    r = P.solve_batch(p=w.params, print_level=0, device="cpu")
    it = np.asarray(r.iterations); print(set(r.path), it.max(), np.argmax(it), it.mean())
    sys.exit()
idx = int(sys.argv[1])
P = from_casadi(w.nlp, **w.args)
from caspar_backend.batch.inputs import batch_inputs
from caspar_backend.compiled.cuda.group import group_layout
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
from caspar_backend.compiled.kernels.solve_many import solve_rows
from caspar_backend.compiled.options import option_vector, resolve
sub = batch_inputs(P, 1, p=w.params[idx:idx+1])
lay = group_layout(P, sub)
O = option_vector(resolve({"print_level": 0})[0]).copy()
hist, outs = np.empty((0, HIST_COLUMNS)), np.empty((1, OUT_SIZE))
code, iters, fval = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1)
ws = DeviceWorkspaces(lay, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg, xp=np)
import inspect
print(inspect.signature(solve_rows))
cnt = collections.Counter()
def prof(frame, event, arg):
    if event == "call" and "caspar_backend/compiled/kernels" in frame.f_code.co_filename:
        cnt[frame.f_code.co_name] += 1
t = time.time()
sys.setprofile(prof)
res = solve_rows(ws.Fall, ws.FO, ws.Iall, ws.IO, O, ws.X0, ws.LBX, ws.UBX, ws.LBG, ws.UBG, hist, outs, code, iters, fval)
sys.setprofile(None)
print("code", code, "iters", iters, "f", fval, time.time()-t)
for k, v in cnt.most_common(40): print(f"{v:8d} {v/iters[0]:8.2f} {k}")
