"""What ``caspar warmup`` compiles once per machine for the general GPU path.

The GPU interior point launches kernels that are the same for every problem: the fused
vector operations (:mod:`caspar_backend.arrays.fused_cuda`, one ``RawModule``), the
hand-written kernels of ``kernels/`` (:mod:`caspar_backend.arrays.raw_kernels`) and the
few CuPy kernels it calls.  CuPy compiles each on its first use on a machine and keeps
the binary in its own disk cache (``~/.cupy/kernel_cache``, ``$CUPY_CACHE_DIR``), so
without a warmup the first GPU solve on a fresh machine pays seconds of NVRTC that no
later solve pays.  :func:`general_path` solves bounded, constrained problems on the
GPU once, which compiles them: a small one (its KKT system factorized densely) and one
whose KKT system takes the sparse path of large models (cuDSS) -- after the small one
alone, a large problem's first solve on a fresh H200 still spent 5.2 s in its setup
(case9241_pegase), which its later solves do not -- and the restoration phase and
IPOPT's safe slacks, whose vector operations an ordinary iteration does not make
(:func:`check_solves`).  Then :func:`long_scans` compiles the kernel CuPy's scans take
on long arrays only (boolean-mask selection, ``cumsum``: the symbolic KKT structure of a
large model), which no check problem's short arrays reach -- after the solves,
case9241's first solve still compiled it.  A problem's own evaluation kernels are
compiled (and cached under ``$CASPAR_CACHE_DIR``) when that problem first builds its
GPU evaluator.
"""

from __future__ import annotations

import time


def general_path() -> float:
    """Make the :func:`check_solves` on ``device='cuda'`` (compiling the general path's
    kernels into CuPy's cache); the seconds it took.  Raises where a solve fails."""
    from .errors import CasparError

    t0 = time.perf_counter()
    for name, problem, x0, opts in check_solves():
        r = problem.solve(x0=x0, device="cuda", print_level=0, **opts)
        if r.status != "Solve_Succeeded":
            raise CasparError(f"caspar warmup: the GPU check problem ({name}) ended "
                              f"{r.status}")
    long_scans()
    return time.perf_counter() - t0


def check_solves() -> list:
    """``(name, problem, x0, options)`` of the solves :func:`general_path` makes: HS071
    (the dense KKT path), the sparse check problem (cuDSS's path), the same from the
    restoration phase (``start_with_resto``: its elastic problem's vector operations)
    and :func:`safe_slack_problem` (IPOPT's safe slacks) -- the last two because a
    PGLib case's first GPU solve that took those paths still compiled ten CuPy kernels
    after the first two alone (case1803_snem, 2.6 s of its 3.1 s)."""
    sparse = sparse_check_problem()
    return [("HS071", hs071(), [1.0, 5.0, 5.0, 1.0], {}),
            ("sparse check problem", sparse, None, {}),
            ("sparse check problem from the restoration phase", sparse, None,
             {"start_with_resto": True}),
            ("safe-slack check problem", safe_slack_problem(), None, {"tol": 1e-8})]


def long_scans(n: int = 1 << 20) -> None:
    """A ``cumsum`` and a boolean-mask selection over ``n`` int64 values on the device:
    past a few thousand elements CuPy's scan runs a block-sum kernel of its own
    (``cupy_bsum_shfl``) that the short arrays of the check problems never compile."""
    import cupy as cp

    from .errors import CasparError

    a = cp.arange(n, dtype=cp.int64)
    total = cp.cumsum(a)[-1]
    kept = a[a % 3 != 0]
    if int(total) != n * (n - 1) // 2 or kept.size != n - (n + 2) // 3:
        raise CasparError("caspar warmup: CuPy's long scan gave a wrong result")


def hs071():
    """Hock-Schittkowski 71: bounds, an inequality and an equality (the paths of an
    ordinary iteration: slacks, bound multipliers, the filter line search) -- a KKT
    system small enough for the dense factorization
    (:data:`caspar_backend.linsolve.dense_eigen.DENSE_MAX_N`)."""
    from .expr import Graph
    from .model import NLPModel
    from .problem import Problem

    g = Graph()
    x = [g.var(i) for i in range(4)]
    obj = x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2]
    cons = [x[0] * x[1] * x[2] * x[3], x[0] ** 2 + x[1] ** 2 + x[2] ** 2 + x[3] ** 2]
    return Problem(NLPModel(g, obj, cons, lbx=[1.0] * 4, ubx=[5.0] * 4, lbg=[25.0, 40.0],
                            ubg=[float("inf"), 40.0]))


def sparse_check_problem(N: int = 700):
    """A problem whose KKT system (n + m = 2N) is above the dense factorization's size,
    so that its solve takes the sparse path a large model takes (cuDSS's analysis,
    factorization and refinement, the sparse KKT assembly): N variables with bounds and
    one fixed, N - 1 inequality rows, and one wide equality row (a sum of N terms, split
    into term instances summed into the row:
    :func:`caspar_backend.patterns.constraint_instances`)."""
    import numpy as np

    from .expr import Graph
    from .model import NLPModel
    from .problem import Problem

    g = Graph()
    x = [g.var(i) for i in range(N)]
    obj = g.sum([(x[i] - 0.3 * i / N) ** 2 + 0.1 * x[i] * x[i + 1] for i in range(N - 1)])
    cons = [x[i] ** 2 + x[i + 1] ** 2 for i in range(N - 1)] + [g.sum(x)]
    lbx, ubx = -np.ones(N), np.full(N, 0.5)
    lbx[3] = ubx[3] = 0.2
    lbg = np.concatenate([np.full(N - 1, -np.inf), [1.0]])
    ubg = np.concatenate([np.full(N - 1, 0.5), [1.0]])
    return Problem(NLPModel(g, obj, cons, lbx, ubx, lbg, ubg, x0=np.zeros(N)))


def safe_slack_problem(bound: float = 1e8):
    """min x0 + x1^2 s.t. x0 >= bound, x0 - x1 <= 3 bound from x0 = 2 bound: the bound is
    active at the optimum, where a slack of x0 - 1e8 resolves only ~1.5e-8, below
    mu / z late in the solve, so the solve turns to IPOPT's safe slacks
    (:meth:`caspar_backend.solver.quantities.BarrierQuantities.safe_slacks`)."""
    import numpy as np

    from .expr import Graph
    from .model import NLPModel
    from .problem import Problem

    g = Graph()
    x = [g.var(0), g.var(1)]
    return Problem(NLPModel(g, x[0] + x[1] ** 2, [x[0] - x[1]], np.array([bound, -np.inf]),
                            np.array([np.inf, np.inf]), np.array([-np.inf]),
                            np.array([3 * bound]), x0=np.array([2 * bound, 1.0])))
