"""The interior-point NLP solver (IPOPT's algorithm, Waechter & Biegler 2006).

Entry point: :func:`solve_nlp`.  Options: :mod:`.options`; statuses: :mod:`.status`;
result: :class:`.result.SolveResult`.
"""

from .result import SolveResult  # noqa: F401


def solve_nlp(evaluator, lbx, ubx, lbg, ubg, x0, **kwargs):
    """Solve ``min f(x) s.t. lbg <= g(x) <= ubg, lbx <= x <= ubx`` (see :mod:`.ipm`)."""
    from .driver import solve_nlp as _solve

    return _solve(evaluator, lbx, ubx, lbg, ubg, x0, **kwargs)
