"""Linking code generated per pattern into a Numba-CUDA kernel compiled once, with the
toolkit's command-line tools on a machine without a GPU: a kernel calling an external
``gen_eliminate`` (``cuda.declare_device(..., abi="c")``) compiled to PTX by Numba, then
to a relocatable object (``ptxas -c``); the generated elimination compiled alone
(``nvcc -rdc=true -cubin``); both linked by ``nvlink``.  Run in a scratch folder holding
elim_64.cu (gen_ldl.straight_source with a ``__global__`` wrapper, as session 57 did);
the shell lines after it are in the folder's README."""
import os, types, subprocess, time
from pathlib import Path
import numpy as np
root = Path("/usr/local/cuda"); os.environ["CUDA_HOME"] = str(root)
from numba import cuda, types as nt
from numba.cuda import config
import numba.cuda.cudadrv.nvvm as nvvm
CC = (9, 0)
libdevice = str(root / "nvvm" / "libdevice" / "libdevice.10.bc")
config.FORCE_CUDA_CC = CC
nvvm.get_libdevice = lambda: libdevice
nvvm.open_libdevice = lambda: Path(libdevice).read_bytes()
gen = cuda.declare_device("gen_eliminate", nt.int32(nt.CPointer(nt.float64), nt.CPointer(nt.float64), nt.CPointer(nt.float64), nt.CPointer(nt.float64)), abi="c")
from numba.core.extending import intrinsic  # noqa
import numba
@numba.extending.intrinsic
def addr(typingctx, a):
    sig = nt.CPointer(a.dtype)(a)
    def codegen(context, builder, signature, args):
        ary = context.make_array(a)(context, builder, args[0])
        return ary.data
    return sig, codegen
def k(C, L, D, Di, ok):
    i = cuda.grid(1)
    if i == 0:
        ok[0] = gen(addr(C), addr(L), addr(D), addr(Di))
t = time.time()
ptx, _ = cuda.compile_ptx(k, "void(float64[:], float64[:], float64[:], float64[:], int32[:])", cc=CC)
open("k.ptx", "w").write(ptx)
print("ptx", time.time() - t, "s", [l for l in ptx.splitlines() if "gen_eliminate" in l][:3])
