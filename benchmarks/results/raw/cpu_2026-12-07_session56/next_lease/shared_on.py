"""Run a module as __main__ with the CUDA batch kernel's QDLDL working vectors in shared
memory by default (what launch.SHARED_DEFAULT = True would do, without editing cuda/, whose
sources stamp the kernel cache).  argv: module, then its arguments."""
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
from caspar_backend.compiled.cuda import launch as L  # noqa: E402

d = list(L.solve_on_device.__defaults__)     # (threads, lanes, shared)
d[-1] = True
L.solve_on_device.__defaults__ = tuple(d)
L.SHARED_DEFAULT = True
mod = sys.argv[1]
sys.argv = [mod] + sys.argv[2:]
runpy.run_module(mod, run_name="__main__", alter_sys=True)
