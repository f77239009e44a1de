"""Nonlinear least squares: Levenberg-Marquardt with the Schur complement.

``LeastSquaresProblem`` (:mod:`.problem`) compiles a residual vector r(x; p) with caspar's
compiler; ``problem.solve(...)`` runs the trust-region minimizer (:mod:`.trust_region`)
with Ceres' options (:mod:`.options`), linear solvers (:mod:`.linear_solvers`,
:mod:`.schur`), robust losses (:mod:`.losses`) and summary (:mod:`.summary`).
:mod:`.colmap` reads a pycolmap ``Reconstruction`` into a bundle adjustment problem and
writes the refined values back; :mod:`.bal` does the same for BAL files.  Submodules load
on first use.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

_LAZY = {
    "LeastSquaresProblem": ("caspar_backend.lsq.problem", "LeastSquaresProblem"),
    "ResidualBlock": ("caspar_backend.lsq.problem", "ResidualBlock"),
    "SolverOptions": ("caspar_backend.lsq.options", "SolverOptions"),
    "Summary": ("caspar_backend.lsq.summary", "Summary"),
    "Huber": ("caspar_backend.lsq.losses", "Huber"),
    "Cauchy": ("caspar_backend.lsq.losses", "Cauchy"),
    "SoftL1": ("caspar_backend.lsq.losses", "SoftL1"),
    "LossFunction": ("caspar_backend.lsq.losses", "LossFunction"),
    "minimize": ("caspar_backend.lsq.trust_region", "minimize"),
    "BALProblem": ("caspar_backend.lsq.bal", "BALProblem"),
    "read_bal": ("caspar_backend.lsq.bal", "read_bal"),
    "write_bal": ("caspar_backend.lsq.bal", "write_bal"),
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
