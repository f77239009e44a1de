"""On the GPU: the batch kernel with QDLDL's serial chains calling externs (ext_kernel.py),
compiled once to a relocatable object and linked with the stub (every chain the loop, as
today) or with Van der Pol's generated straight-line code, and (``whole_stub``) compiled
whole-program with the stub as numba links a kernel; all timed alone on the
pickled layout as k55.py times the kernel (B = 1,000 x3 and 132 x2 at 32 lanes, 1,000 at
one lane; the linked kernels interleaved) and their results compared (codes,
iterations, the sum of f).  argv: pickle, out folder.  Run from the root of the tree."""
import json
import lzma
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.getcwd())
sys.path.insert(0, here)
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
from numba.cuda.cudadrv import devices, driver  # noqa: E402
from numba.cuda.dispatcher import _Kernel  # noqa: E402

import ext_kernel  # noqa: E402
from caspar_backend.compiled.cuda import launch  # noqa: E402
from caspar_backend.compiled.cuda.group import COLUMNS  # noqa: E402
from caspar_backend.compiled.cuda.workspaces import DeviceWorkspaces  # noqa: E402

d = pickle.loads(lzma.decompress(open(sys.argv[1], "rb").read()))
out = Path(sys.argv[2])
assert not COLUMNS


def log(msg):
    print(msg, flush=True)


t0 = time.time()
disp = ext_kernel.dispatcher()
argtypes = launch.signature()
kern = _Kernel(disp.py_func, argtypes, **disp.targetoptions)
lib = kern._codelibrary
ptx = lib.get_asm_str()
log(json.dumps(dict(event="ptx", s=round(time.time() - t0, 1), lines=len(ptx.splitlines()))))
t1 = time.time()
cubins = ext_kernel.build_cubins(ptx, d["lay"], out, log=log)
log(json.dumps(dict(event="cubins", s=round(time.time() - t1, 1),
                    bytes={k: len(v) for k, v in cubins.items()})))
cc = devices.get_context().device.compute_capability
dev_id = devices.get_context().device.id
funcs = {}


def load(name, cubin):
    """Numba's kernel object on ``cubin`` (numba loads a code library's cubin as cuda.core's
    ObjectCode, what its linker returns; nvlink's output is bytes)."""
    lib._cubin_cache[cc] = (driver.ObjectCode.from_cubin(cubin, name=name)
                            if isinstance(cubin, bytes) else cubin)
    lib._cufunc_cache.pop(dev_id, None)
    kern.bind()
    funcs[name] = lib._cufunc_cache[dev_id]
    log(json.dumps(dict(event="loaded", variant=name, regs=funcs[name].attrs.regs,
                        local=funcs[name].attrs.local)))


for name, cubin in cubins.items():
    load(name, cubin)
disp.add_overload(kern, argtypes)
launch._compiled[False] = disp


def run(variant, B, lanes):
    lib._cufunc_cache[dev_id] = funcs[variant]
    ws = DeviceWorkspaces(d["lay"], d["x0"][:B], d["p"][:B], d["lbx"][:B], d["ubx"][:B],
                          d["lbg"][:B], d["ubg"][:B], interleaved=False,
                          shared_structure=True)
    t = time.perf_counter()
    r = launch.solve_on_device(ws, d["O"], lanes=lanes, shared=False)
    ms = 1e3 * (time.perf_counter() - t)
    it = np.asarray(r.iters)
    log(json.dumps(dict(tree="linked", variant=variant, B=B, lanes=lanes, ms=round(ms, 2),
                        iters=int(it.sum()), max_iters=int(it.max()),
                        codes=sorted(set(np.asarray(r.code).tolist())),
                        fsum=float(np.sum(r.f)))))


for v in list(funcs):
    run(v, 4, 32)
for B, lanes, reps in ((1000, 32, 3), (132, 32, 2), (1000, 1, 1)):
    for _ in range(reps):
        for v in list(funcs):
            run(v, B, lanes)
# today's build for comparison: the kernel's PTX compiled whole-program by the driver's
# JIT (as numba links a kernel), the stub's relocatable object linked beside it
t2 = time.time()
try:
    linker = driver._Linker(max_registers=None, cc=cc, lto=False)
    linker.add_ptx(ptx.encode())
    linker.add_cubin((out / "stub.o").read_bytes(), name="stub")
    load("whole_stub", linker.complete())
    log(json.dumps(dict(event="whole-program link", s=round(time.time() - t2, 1))))
except Exception as e:      # the relocatable kernels were timed
    log(json.dumps(dict(event="whole-program link failed", error=repr(e)[:400])))
if "whole_stub" in funcs:
    run("whole_stub", 4, 32)
    for B, lanes in ((1000, 32), (132, 32), (1000, 32), (132, 32)):
        for v in ("whole_stub", "stub"):
            run(v, B, lanes)
