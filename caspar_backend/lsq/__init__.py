"""Nonlinear least squares: Levenberg-Marquardt with the Schur complement.

``LeastSquaresProblem`` (:mod:`.problem`) compiles a residual vector r(x; p) with caspar's
compiler; ``problem.solve(...)`` runs the trust-region minimizer (:mod:`.trust_region`)
with Ceres' options (:mod:`.options`), linear solvers (:mod:`.linear_solvers`,
:mod:`.schur`), robust losses (:mod:`.losses`) and summary (:mod:`.summary`).
:mod:`.colmap` reads a pycolmap ``Reconstruction`` into a bundle adjustment problem and
writes the refined values back.  Submodules load on first use.
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
}

__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
