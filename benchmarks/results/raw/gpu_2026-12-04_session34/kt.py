"""Kernel-only timing of the rows kernel on Van der Pol: distinct or identical instances."""
import sys, time, numpy as np
from numba import cuda
import cupy as cp
from benchmarks.bench_batch import vdp_workload
from caspar_backend import from_casadi
from caspar_backend.batch.inputs import batch_inputs
from caspar_backend.compiled.cuda import launch
from caspar_backend.compiled.cuda.group import kernel_plan, COLUMNS
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces
from caspar_backend.compiled.kernels.record import HIST_COLUMNS, OUT_SIZE
from caspar_backend.compiled.options import option_vector
mode, reps = sys.argv[1], int(sys.argv[2])
W = vdp_workload(2000)
w1 = vdp_workload(1)
P = from_casadi(w1.nlp, **w1.args)
k = launch.kernel(False)
for B in [int(a) for a in sys.argv[3:]]:
    p = W.params[:B] if mode == "distinct" else np.repeat(W.params[:1], B, axis=0)
    sub = batch_inputs(P, B, p=p)
    plan = kernel_plan(P, {"tol": 1e-8}, sub)
    assert plan.reason == "", plan.reason
    O = cp.asarray(option_vector(plan.opts))
    tpb = launch.threads_per_block(B, launch._multiprocessors())
    ts = []
    for r in range(reps):
        ws = DeviceWorkspaces(plan.layout, sub.x0, sub.p, sub.lbx, sub.ubx, sub.lbg, sub.ubg,
                              interleaved=COLUMNS, shared_structure=True)
        code, iters, fval = cp.empty(B, np.int64), cp.empty(B, np.int64), cp.empty(B)
        hist, outs = cp.empty((0, HIST_COLUMNS)), cp.empty((B, OUT_SIZE))
        cuda.synchronize()
        t = time.perf_counter()
        k[(B + tpb - 1) // tpb, tpb](ws.Fall, ws.FO, ws.Ishared, ws.Iscratch, ws.IO, O, ws.X0, ws.LBX,
                                     ws.UBX, ws.LBG, ws.UBG, hist, outs, code, iters, fval)
        cuda.synchronize()
        ts.append(time.perf_counter() - t)
    it = cp.asnumpy(iters)
    print("kt", mode, "B", B, "tpb", tpb, "LF", plan.layout.Fb0.size, "ms", [round(1e3 * x, 2) for x in ts],
          "maxit", it.max(), "meanit", round(it.mean(), 2), "codes", sorted(set(cp.asnumpy(code).tolist())),
          "ms/maxit", round(1e3 * min(ts) / it.max(), 3), flush=True)
