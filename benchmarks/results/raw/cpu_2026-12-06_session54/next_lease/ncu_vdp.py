"""One launch of the CUDA batch kernel compiled with line information, for Nsight Compute:
Van der Pol N = 50, B instances (argv[1]), LANES threads per instance (argv[2]).

Every ``cuda.jit`` of the process gets ``lineinfo=True`` (patched before caspar imports
numba-cuda's entry points), into its own kernel cache (``CASPAR_CACHE_DIR`` below), so
that the profile's SASS maps to the kernels' Python lines.  The problem is built on the
CPU, so that the launch profiled is the only one of ``_solve_rows`` in the process."""
import os
import sys

os.environ["CASPAR_CACHE_DIR"] = "/tmp/cc_lineinfo"
os.environ["CASPAR_BACKGROUND_COMPILE"] = "0"
from numba import cuda  # noqa: E402

_jit = cuda.jit


def _with_lines(*a, **k):
    k.setdefault("lineinfo", True)
    return _jit(*a, **k)


cuda.jit = _with_lines
sys.path.insert(0, os.getcwd())
from benchmarks import batch_measure as bm  # noqa: E402
from benchmarks.bench_kernel_latency import kernel_alone, workload  # noqa: E402

B, lanes = int(sys.argv[1]), int(sys.argv[2])
P, _ = bm.compile_caspar(workload("vdp", 2), "cpu")
ms, k = kernel_alone(P, workload("vdp", B).params, 1, lanes=lanes)
print(f"vdp B={B} lanes={lanes}: {ms:.1f} ms (compile included), iterations "
      f"{int(k.iters.sum())}, max {int(k.iters.max())}", flush=True)
