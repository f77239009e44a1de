"""ext_kernel.py's kernel compiled for sm_90 on a machine without a GPU: Numba + NVVM to
PTX (the externs undefined), ``ptxas -c`` to a relocatable object once, then Van der
Pol's generated externs and the stub each compiled alone (``nvcc -rdc=true -cubin``) and
linked (``nvlink``): each step's time, and whether the links resolve.  argv: out folder,
pickle.  Run from the root of the tree (PYTHONPATH=.)."""
import lzma
import os
import pickle
import sys
import time
from pathlib import Path


sys.path.insert(0, os.getcwd())
from benchmarks import vm_cuda  # noqa: E402

vm_cuda.setup()
from numba import cuda  # noqa: E402

CC = vm_cuda.CC
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from caspar_backend.compiled.cuda import launch  # noqa: E402
import ext_kernel  # noqa: E402

t0 = time.time()
k = ext_kernel.dispatcher(cache=False)
ptx, _ = cuda.compile_ptx(k.py_func, launch.signature(), cc=CC)
print(f"ptx {time.time() - t0:.0f} s, {len(ptx.splitlines())} lines; externs:",
      sorted({ln.split()[-1] for ln in ptx.splitlines() if ln.startswith(".extern .func")}),
      flush=True)
lay = pickle.loads(lzma.decompress(open(sys.argv[2], "rb").read()))["lay"]
cubins = ext_kernel.build_cubins(ptx, lay, Path(sys.argv[1]))
print({k: len(v) for k, v in cubins.items()})
