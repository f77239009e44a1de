"""Sparse symmetric indefinite linear solvers that report inertia (see :mod:`.base`)."""

from .base import LinearSolver, Factorization, SparseStructure  # noqa: F401


def make_linear_solver(name: str, xp=None) -> "LinearSolver":
    """The linear solver registered under ``name`` (option ``linear_solver``)."""
    from ..errors import OptionError

    if name == "qdldl":
        from .qdldl import QDLDLSolver

        return QDLDLSolver()
    raise OptionError(f"unknown linear_solver {name!r}; available: ['qdldl']")
