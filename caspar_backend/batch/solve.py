"""``solve_batch``: B instances of one compiled problem in one call.

Instances share the compiled problem (its pattern groups and generated code) and differ
in the parameters ``p``, the starting point and multipliers, and the variable and
constraint bounds (:mod:`.inputs`).  Each instance's answer is that of its own
:meth:`Problem.solve <caspar_backend.problem.Problem.solve>` with the same options:
the same status, the same iterations and the same solution up to round-off.
"""

from __future__ import annotations

import time

from .inputs import batch_inputs
from .result import BatchResult


def solve_batch(problem, x0=None, p=None, lam_g0=None, lam_x0=None, *, lbx=None,
                ubx=None, lbg=None, ubg=None, batch_size=None, **options) -> BatchResult:
    """Solve B instances of ``problem`` (a :class:`~caspar_backend.problem.Problem`);
    inputs as :mod:`.inputs` describes, options those of ``Problem.solve`` (IPOPT's
    names, ``device``).  The model's current ``p`` is not changed."""
    t0 = time.perf_counter()
    inp = batch_inputs(problem, batch_size, x0=x0, p=p, lbx=lbx, ubx=ubx, lbg=lbg,
                       ubg=ubg, lam_g0=lam_g0, lam_x0=lam_x0)
    t_setup = time.perf_counter() - t0
    results = [_single(problem, inp, b, options) for b in range(inp.size)]
    total = time.perf_counter() - t0
    timings = dict(setup=t_setup, lockstep=0.0, single=total - t_setup, total=total)
    return BatchResult.from_results(results, ["single"] * inp.size,
                                    ["sequential"] * inp.size, timings, problem.n,
                                    problem.m)


def _single(problem, inp, b, options):
    """Instance b by its own solve; the model's current p is kept."""
    keep = problem.model.p
    try:
        return problem.solve(**inp.row(b), **dict(options))
    finally:
        problem.model.p = keep
