"""What a least-squares solve reports: Ceres' termination types and summary.

:class:`Summary` mirrors ``ceres::Solver::Summary``: initial and final cost (Ceres'
convention ``1/2 sum_i rho_i(|r_i|^2)``), successful and unsuccessful steps, the time
per phase, the termination type (CONVERGENCE / NO_CONVERGENCE / FAILURE) and message,
and one :class:`IterationSummary` per iteration.  :meth:`Summary.brief_report` and
:meth:`Summary.full_report` print what Ceres' ``BriefReport()`` / ``FullReport()``
print, with the fields caspar has.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

CONVERGENCE = "CONVERGENCE"
NO_CONVERGENCE = "NO_CONVERGENCE"
FAILURE = "FAILURE"
TERMINATION_TYPES = (CONVERGENCE, NO_CONVERGENCE, FAILURE)


@dataclass
class IterationSummary:
    """One row of Ceres' progress table (final)."""

    iteration: int
    cost: float
    cost_change: float = 0.0
    gradient_max_norm: float = 0.0
    step_norm: float = 0.0
    relative_decrease: float = 0.0
    trust_region_radius: float = 0.0
    step_is_valid: bool = True
    step_is_successful: bool = True
    iteration_time_in_seconds: float = 0.0
    cumulative_time_in_seconds: float = 0.0

    HEADER = ("iter      cost      cost_change  |gradient|   |step|    tr_ratio  "
              "tr_radius  iter_time  total_time")

    def line(self) -> str:
        return (f"{self.iteration:4d} {self.cost:14.6e} {self.cost_change:12.2e} "
                f"{self.gradient_max_norm:10.2e} {self.step_norm:9.2e} "
                f"{self.relative_decrease:9.2e} {self.trust_region_radius:9.2e} "
                f"{self.iteration_time_in_seconds:9.2e} {self.cumulative_time_in_seconds:10.2e}")


@dataclass
class Summary:
    """The result of a solve (final).  ``x``: the final point (host float64, the
    problem's full variable vector, fixed variables included)."""

    x: np.ndarray
    initial_cost: float
    final_cost: float
    termination_type: str
    message: str
    num_successful_steps: int
    num_unsuccessful_steps: int
    num_residuals: int
    num_parameters: int
    num_effective_parameters: int
    linear_solver_type: str
    num_eliminated_blocks: int = 0
    num_eliminated_parameters: int = 0
    preprocessor_time_in_seconds: float = 0.0
    minimizer_time_in_seconds: float = 0.0
    total_time_in_seconds: float = 0.0
    residual_evaluation_time_in_seconds: float = 0.0
    jacobian_evaluation_time_in_seconds: float = 0.0
    linear_solver_time_in_seconds: float = 0.0
    iterations: list = field(default_factory=list)
    num_residual_evaluations: int = 0
    num_jacobian_evaluations: int = 0
    loss: str = "TRIVIAL"

    @property
    def is_solution_usable(self) -> bool:
        """Ceres: CONVERGENCE, NO_CONVERGENCE and USER_SUCCESS leave a usable point."""
        return self.termination_type in (CONVERGENCE, NO_CONVERGENCE)

    @property
    def num_iterations(self) -> int:
        """Iterations after iteration 0 (Ceres' ``iterations.size() - 1``)."""
        return max(len(self.iterations) - 1, 0)

    def brief_report(self) -> str:
        """One line, as Ceres' ``Summary::BriefReport()``."""
        return (f"caspar least squares Report: Iterations: {self.num_iterations}, "
                f"Initial cost: {self.initial_cost:.6e}, Final cost: {self.final_cost:.6e}, "
                f"Termination: {self.termination_type}")

    def full_report(self) -> str:
        """Ceres' ``Summary::FullReport()`` layout with the fields caspar has."""
        L = ["", "caspar least squares Solver Report", "-" * 34,
             f"{'Residuals':<30}{self.num_residuals:>12d}",
             f"{'Parameters':<30}{self.num_parameters:>12d}",
             f"{'Effective parameters':<30}{self.num_effective_parameters:>12d}",
             f"{'Eliminated blocks (Schur)':<30}{self.num_eliminated_blocks:>12d}",
             f"{'Eliminated parameters':<30}{self.num_eliminated_parameters:>12d}",
             "",
             f"{'Minimizer':<30}{'TRUST_REGION':>24}",
             f"{'Trust region strategy':<30}{'LEVENBERG_MARQUARDT':>24}",
             f"{'Linear solver':<30}{self.linear_solver_type:>24}",
             f"{'Loss function':<30}{self.loss:>24}",
             "",
             "Cost:",
             f"{'Initial':<30}{self.initial_cost:>24.6e}",
             f"{'Final':<30}{self.final_cost:>24.6e}",
             f"{'Change':<30}{self.initial_cost - self.final_cost:>24.6e}",
             "",
             f"{'Minimizer iterations':<30}{self.num_iterations:>12d}",
             f"{'Successful steps':<30}{self.num_successful_steps:>12d}",
             f"{'Unsuccessful steps':<30}{self.num_unsuccessful_steps:>12d}",
             "",
             "Time (in seconds):",
             f"{'Preprocessor':<30}{self.preprocessor_time_in_seconds:>12.4f}",
             f"{'  Residual only evaluation':<30}{self.residual_evaluation_time_in_seconds:>12.4f}"
             f" ({self.num_residual_evaluations})",
             f"{'  Jacobian & residual evaluation':<30}"
             f"{self.jacobian_evaluation_time_in_seconds:>10.4f} ({self.num_jacobian_evaluations})",
             f"{'  Linear solver':<30}{self.linear_solver_time_in_seconds:>12.4f}",
             f"{'Minimizer':<30}{self.minimizer_time_in_seconds:>12.4f}",
             f"{'Total':<30}{self.total_time_in_seconds:>12.4f}",
             "",
             f"Termination: {self.termination_type:>20} ({self.message})", ""]
        return "\n".join(L)

    def progress_table(self) -> str:
        """Ceres' per-iteration table (``minimizer_progress_to_stdout``)."""
        return "\n".join([IterationSummary.HEADER] + [it.line() for it in self.iterations])
