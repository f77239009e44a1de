"""Sparse symmetric indefinite linear solvers that report inertia (see :mod:`.base`)."""

from .base import LinearSolver, Factorization, SparseStructure  # noqa: F401


def make_linear_solver(name: str, xp=None, opts=None) -> "LinearSolver":
    """The linear solver registered under ``name`` (option ``linear_solver``) for arrays
    of module ``xp`` (numpy when None): qdldl and pardisomkl (Intel MKL's PARDISO)
    work on host arrays, cudss on CuPy arrays.  ``opts``: the solve's resolved options
    (their ``pardisomkl_*`` settings; None: the defaults)."""
    import numpy as np

    from ..errors import DeviceError, OptionError

    on_host = xp is None or xp is np
    if name == "qdldl":
        if not on_host:
            raise DeviceError("linear_solver='qdldl' runs on the host; with device='cuda' "
                              "use linear_solver='cudss'")
        from .qdldl import QDLDLSolver

        return QDLDLSolver()
    if name == "pardisomkl":
        if not on_host:
            raise DeviceError("linear_solver='pardisomkl' runs on the host; with "
                              "device='cuda' use linear_solver='cudss'")
        from .pardiso_mkl import PardisoMKLSolver

        if opts is None:
            return PardisoMKLSolver()
        return PardisoMKLSolver(
            order=opts.pardisomkl_order, matching=opts.pardisomkl_matching_strategy,
            refinement_steps=opts.pardisomkl_max_iterative_refinement_steps,
            msglvl=opts.pardisomkl_msglvl,
            perturbation_means_singular=(
                opts.pardisomkl_repeated_perturbation_means_singular == "yes"))
    if name == "cudss":
        if on_host:
            raise DeviceError("linear_solver='cudss' needs device arrays (device='cuda')")
        from .cudss import CudssSolver

        return CudssSolver()
    raise OptionError(f"unknown linear_solver {name!r}; available: "
                      "['qdldl', 'pardisomkl', 'cudss']")
