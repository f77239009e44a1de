"""Check: batched solves against single solves on the problem bank.

    python benchmarks/bench_batch_bank.py [--starts 4] [--filter SUBSTRING] [--device cpu]

For every bank problem (``tests/support/problem_bank.py``, the large instances left out)
it builds B = ``--starts`` instances -- the problem's x0 and ``starts - 1`` perturbed
starts ``x0 + 0.05 (1 + |x0|) N(0, 1)`` (fixed seed) -- solves them with one
``Problem.solve_batch`` call and each with its own ``Problem.solve``, and prints per
problem how many instances ran in lockstep and why the others left the batch, then
every instance whose status, iteration count or objective (1e-8 relative) differs.
The last line sums up: instances per path and the number of differences (0 is the
requirement: docs/batch.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # the repository root: tests.support

from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402


def same(s, b, res) -> bool:
    """Instance b of the batch ``res`` agrees with the single result ``s``."""
    if s.status != res.status[b] or s.iterations != res.iterations[b]:
        return False
    if np.isnan(s.f):
        return bool(np.isnan(res.f[b]))
    return abs(s.f - res.f[b]) <= 1e-8 * max(1.0, abs(s.f))


def main(argv=None):
    from caspar_backend.adapters.casadi import from_casadi

    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=4)
    ap.add_argument("--filter", default="")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    paths, differ = Counter(), []
    for bp in bank(include_slow=False):
        if a.filter not in bp.name:
            continue
        d = bp.build()
        problem = from_casadi(_nlp(d))
        opts = dict(bp.options, print_level=0)
        x0 = np.asarray(d["x0"], float)
        X0 = np.array([x0] + [x0 + 0.05 * (1 + np.abs(x0)) * rng.standard_normal(x0.size)
                              for _ in range(a.starts - 1)])
        bounds = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg")}
        res = problem.solve_batch(x0=X0, **bounds, device=a.device, **opts)
        for b in range(a.starts):
            s = problem.solve(X0[b], **bounds, **opts)
            paths[res.path[b]] += 1
            if not same(s, b, res):
                differ.append((bp.name, b))
                print(f"DIFFERS {bp.name} instance {b} ({res.path[b]}): single {s.status} "
                      f"{s.iterations} it f={s.f!r}; batch {res.status[b]} "
                      f"{res.iterations[b]} it f={res.f[b]!r}")
        left = Counter(r for r in res.reason if r)
        print(f"{bp.name:36s} lockstep {res.path.count('lockstep')}/{a.starts}"
              + (f"; left: {dict(left)}" if left else ""), flush=True)
    print(f"\ninstances: {dict(paths)}; differing from their single solve: {len(differ)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
