"""The compiled per-instance interior point (issues 21/22): caspar's interior point for
one instance, compiled by Numba once per machine, for small problems at IPOPT's pace.

``Problem.solve``, CasADi's ``nlpsol`` and the Pyomo solvers take it for small CPU solves
(:mod:`.dispatch`, option ``compiled_path``).  ``solve_compiled(problem, x0, p, lbx, ubx,
lbg, ubg, **options)`` -> ``SolveResult`` or ``None`` (the general path must solve) is
the direct entry.  Needs numba (a dependency; without it the general path solves);
importing this package does not import Numba.

Modules: :mod:`.tape` (model -> tapes), :mod:`.structure` (bound structure, KKT pattern
in QDLDL's order), :mod:`.workspace_layout` (the flat buffers), :mod:`.options` (which
options are implemented), :mod:`.solve` (the entry point), :mod:`.kernels` (Numba).
"""
from __future__ import annotations


def available() -> bool:
    """Whether numba is importable (the compiled path can run)."""
    import importlib.util

    return importlib.util.find_spec("numba") is not None


def solve_compiled(problem, x0=None, p=None, lbx=None, ubx=None, lbg=None, ubg=None,
                   **options):
    """See :func:`caspar_backend.compiled.solve.solve_compiled`."""
    from .solve import solve_compiled as _solve

    return _solve(problem, x0, p, lbx, ubx, lbg, ubg, **options)


def warmup() -> float:
    """Compile the kernels (or load them from the cache) ahead of the first solve; see
    :func:`caspar_backend.compiled.solve.warmup`."""
    from .solve import warmup as _warmup

    return _warmup()
