"""Profile: where one ``solve_batch`` call spends its time (Python side).

    python benchmarks/profile_batch.py [--device cpu|cuda] [--B 10000] [--top 30]

The three-link arm IK (``adapters/casadi/models.py`` ``arm_ik``) for ``--B`` targets:
one warm-up batch (kept on the device to its end, so every CuPy kernel is compiled),
then one batch under cProfile, printed by internal and by cumulative time.  On the GPU
the internal-time ranking is dominated by CuPy calls (one launch per array operation)
and host reads (``bool(x.any())``): the per-iteration cost docs/batch.md describes.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args(argv)
    from caspar_backend.adapters.casadi import from_casadi
    from caspar_backend.adapters.casadi.models import arm_ik, arm_targets
    from caspar_backend.batch.ipm import LockstepIPM

    nlp, bounds = arm_ik()
    problem = from_casadi(nlp, **bounds)
    x0 = [0.1, 0.2, 0.3]
    targets = arm_targets(a.B, seed=2)
    keep = LockstepIPM.HOST_TAIL_WORK
    LockstepIPM.HOST_TAIL_WORK = 0
    try:
        problem.solve_batch(x0=x0, p=targets[:64], device=a.device)
    finally:
        LockstepIPM.HOST_TAIL_WORK = keep
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    res = problem.solve_batch(x0=x0, p=targets, device=a.device)
    prof.disable()
    wall = time.perf_counter() - t
    print(f"B = {a.B} on {a.device}: {wall:.3f} s under the profiler, "
          f"{int(res.iterations.max())} iterations (the slowest instance)")
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(a.top)
    stats.sort_stats("cumtime").print_stats(a.top)


if __name__ == "__main__":
    main()
