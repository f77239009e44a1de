"""What ``caspar warmup`` compiles once per machine for the general GPU path.

The GPU interior point launches kernels that are the same for every problem: the fused
vector operations (:mod:`caspar_backend.arrays.fused_cuda`, one ``RawModule``), the
hand-written kernels of ``kernels/`` (:mod:`caspar_backend.arrays.raw_kernels`) and the
few CuPy kernels it calls.  CuPy compiles each on its first use on a machine and keeps
the binary in its own disk cache (``~/.cupy/kernel_cache``, ``$CUPY_CACHE_DIR``), so
without a warmup the first GPU solve on a fresh machine pays seconds of NVRTC that no
later solve pays.  :func:`general_path` solves a small bounded, constrained problem on
the GPU once, which compiles them; a problem's own evaluation kernels are compiled (and
cached under ``$CASPAR_CACHE_DIR``) when that problem first builds its GPU evaluator.
"""

from __future__ import annotations

import time


def general_path() -> float:
    """Solve a small problem on ``device='cuda'`` (compiling the general path's
    kernels into CuPy's cache); the seconds it took.  Raises where the solve fails."""
    from .errors import CasparError
    from .expr import Graph
    from .model import NLPModel
    from .problem import Problem

    t0 = time.perf_counter()
    # Hock-Schittkowski 71: bounds, an inequality and an equality (the paths of an
    # ordinary iteration: slacks, bound multipliers, the filter line search)
    g = Graph()
    x = [g.var(i) for i in range(4)]
    obj = x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    cons = [x[0] * x[1] * x[2] * x[3], x[0] ** 2 + x[1] ** 2 + x[2] ** 2 + x[3] ** 2]
    model = NLPModel(g, obj, cons, lbx=[1.0] * 4, ubx=[5.0] * 4, lbg=[25.0, 40.0],
                     ubg=[float("inf"), 40.0])
    r = Problem(model).solve(x0=[1.0, 5.0, 5.0, 1.0], device="cuda", print_level=0)
    if r.status != "Solve_Succeeded":
        raise CasparError(f"caspar warmup: the GPU check problem (HS071) ended {r.status}")
    return time.perf_counter() - t0
