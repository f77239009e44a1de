"""The least-squares solver's options: Ceres' names, defaults and meanings.

:class:`SolverOptions` is a frozen dataclass; :func:`solver_options` builds one from a
user mapping and raises :class:`~caspar_backend.errors.OptionError` for an unknown name
(with the closest valid names) or a value of the wrong type or range.  The names and
defaults are those of ``ceres::Solver::Options`` for the trust-region minimizer with
the LEVENBERG_MARQUARDT strategy, so a Ceres user already knows them.

``linear_solver_type`` takes Ceres' names; ``None`` (caspar's default) chooses from the
problem: the Schur complement when the Jacobian's pattern has points-onto-cameras
structure (:mod:`caspar_backend.lsq.schur`; DENSE_SCHUR while the reduced system has
at most :data:`DENSE_SCHUR_MAX` unknowns, or :data:`DENSE_SCHUR_LIMIT` when it is dense
anyway, else SPARSE_SCHUR), otherwise
DENSE_NORMAL_CHOLESKY up to :data:`DENSE_NORMAL_MAX` unknowns, else
SPARSE_NORMAL_CHOLESKY.  (Ceres' own default is SPARSE_NORMAL_CHOLESKY; COLMAP chooses
by the number of images, as here by size.)
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass

from ..errors import OptionError

CPU_EVALUATORS = ("auto", "tape", "numpy")
LINEAR_SOLVER_TYPES = ("DENSE_QR", "DENSE_NORMAL_CHOLESKY", "SPARSE_NORMAL_CHOLESKY",
                       "DENSE_SCHUR", "SPARSE_SCHUR", "ITERATIVE_SCHUR")
#: automatic choice: a dense reduced camera system up to this many unknowns, and up to
#: DENSE_SCHUR_LIMIT where S couples at least DENSE_SCHUR_MIN_DENSITY of its block pairs
#: (a scene whose images share points at random: 1,000 images, 30,000 points, track 5
#: couple 45%, and QDLDL's scalar LDL^T of such an S took 310 s an iteration pair where
#: LAPACK's dense Cholesky takes seconds)
DENSE_SCHUR_MAX = 2000
DENSE_SCHUR_LIMIT = 16000
DENSE_SCHUR_MIN_DENSITY = 0.02
#: automatic choice without Schur structure: dense normal equations up to this many
DENSE_NORMAL_MAX = 1000


@dataclass(frozen=True)
class SolverOptions:
    """Options of :func:`caspar_backend.lsq.solve` (final).  Ceres' meanings:

    * ``max_num_iterations``: iterations (successful or not) before NO_CONVERGENCE;
    * ``function_tolerance``: CONVERGENCE when ``|cost change| <= tol * cost``;
    * ``gradient_tolerance``: CONVERGENCE when ``max_i |x_i - P(x - g)_i| <= tol``
      after a successful step (g the gradient, P the projection onto the bounds);
    * ``parameter_tolerance``: CONVERGENCE when ``|dx| <= tol (|x| + tol)``;
    * ``initial_trust_region_radius``, ``max_trust_region_radius``,
      ``min_trust_region_radius`` (CONVERGENCE below it);
    * ``min_relative_decrease``: a step is accepted when actual / model decrease
      exceeds it;
    * ``min_lm_diagonal``, ``max_lm_diagonal``: clamp of diag(J^T J) in D;
    * ``max_num_consecutive_invalid_steps``: FAILURE after that many steps whose
      model decrease is not positive (or whose linear solve failed);
    * ``jacobi_scaling``: columns of J scaled by ``1 / (1 + |J_col|)`` of the
      starting point;
    * ``max_solver_time_in_seconds``;
    * ``linear_solver_type``: see the module docstring;
    * ``eta``, ``min_linear_solver_iterations``, ``max_linear_solver_iterations``: the
      conjugate gradients of ITERATIVE_SCHUR (:mod:`caspar_backend.lsq.iterative_schur`);
    * ``minimizer_progress_to_stdout``: one line per iteration, Ceres' columns;
    * ``num_threads``: threads of the linear solver's elimination (DENSE_SCHUR; the
      other solvers and the evaluation use one), Ceres' default 1;
    * ``device``: 'cpu', or 'cuda' -- evaluation, products, robust losses and the Schur
      solve on the GPU: DENSE_SCHUR with W dense (:mod:`caspar_backend.lsq.device_schur`)
      or ITERATIVE_SCHUR (:mod:`caspar_backend.lsq.device_iterative_schur`), the
      automatic choice by the dense product's cost (ITERATIVE_SCHUR chosen so runs its
      CG to the direct step, ``device_iterative_schur.DIRECT_ETA``);
    * ``linear_solver_ordering``: the Schur split, Ceres' way -- a list of groups of
      parameter blocks, group 0 eliminated (:mod:`caspar_backend.lsq.ordering`); None:
      found from the Jacobian's pattern;
    * ``cpu_evaluator`` (caspar's, as the interior point's option of that name): how the
      residuals and the Jacobian are evaluated on the CPU -- 'tape' the compiled
      kernels' tape interpreter (:mod:`caspar_backend.compiled.tape_evaluator`),
      'numpy' the generated NumPy code, 'auto' the tape where the kernels are compiled
      on this machine (the same values: the same operations in the same order).
    """

    max_num_iterations: int = 50
    function_tolerance: float = 1e-6
    gradient_tolerance: float = 1e-10
    parameter_tolerance: float = 1e-8
    initial_trust_region_radius: float = 1e4
    max_trust_region_radius: float = 1e16
    min_trust_region_radius: float = 1e-32
    min_relative_decrease: float = 1e-3
    min_lm_diagonal: float = 1e-6
    max_lm_diagonal: float = 1e32
    max_num_consecutive_invalid_steps: int = 5
    jacobi_scaling: bool = True
    max_solver_time_in_seconds: float = 1e9
    linear_solver_type: str | None = None
    eta: float = 1e-1
    min_linear_solver_iterations: int = 0
    max_linear_solver_iterations: int = 500
    minimizer_progress_to_stdout: bool = False
    num_threads: int = 1
    device: str = "cpu"
    linear_solver_ordering: object = None
    cpu_evaluator: str = "auto"

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "linear_solver_type":
                if v is not None and v not in LINEAR_SOLVER_TYPES:
                    raise OptionError(f"option linear_solver_type={v!r}: expected one of "
                                      f"{', '.join(LINEAR_SOLVER_TYPES)} or None (automatic)")
            elif f.name == "linear_solver_ordering":
                continue                    # checked against the problem when it is used
            elif f.name == "device":
                if v not in ("cpu", "cuda"):
                    raise OptionError(f"option device={v!r}: expected 'cpu' or 'cuda'")
            elif f.name == "cpu_evaluator":
                if v not in CPU_EVALUATORS:
                    raise OptionError(f"option cpu_evaluator={v!r}: expected one of "
                                      f"{', '.join(CPU_EVALUATORS)}")
            elif f.type == "bool":
                if not isinstance(v, bool):
                    raise OptionError(f"option {f.name}={v!r}: expected True or False")
            elif f.type == "int":
                if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                    raise OptionError(f"option {f.name}={v!r}: expected an integer >= 0")
            else:
                if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) \
                        or v < 0:
                    raise OptionError(f"option {f.name}={v!r}: expected a number >= 0")
        if self.num_threads < 1:
            raise OptionError(f"option num_threads={self.num_threads!r}: expected an integer "
                              ">= 1")
        if self.min_lm_diagonal <= 0 or self.min_lm_diagonal > self.max_lm_diagonal:
            raise OptionError("options: need 0 < min_lm_diagonal <= max_lm_diagonal")
        if self.initial_trust_region_radius <= 0 or self.max_trust_region_radius <= 0:
            raise OptionError("options: trust region radii must be positive")


NAMES = tuple(f.name for f in dataclasses.fields(SolverOptions))


def solver_options(options=None, **more) -> SolverOptions:
    """A :class:`SolverOptions` from a mapping (or a SolverOptions) and keywords;
    unknown names raise :class:`OptionError` naming the closest valid ones."""
    if isinstance(options, SolverOptions):
        base = dataclasses.asdict(options)
    else:
        base = dict(options or {})
    base.update(more)
    for k in base:
        if k not in NAMES:
            close = difflib.get_close_matches(k, NAMES, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise OptionError(f"unknown least-squares option {k!r}{hint} (valid options: "
                              f"{', '.join(NAMES)})")
    return SolverOptions(**base)
