"""Which solver options the compiled path implements, and the option vector it reads.

Options are first validated by the solver's typed table
(:func:`caspar_backend.solver.options.resolve_options`: an unknown name or a bad value
raises :class:`~caspar_backend.errors.OptionError`, as ``Problem.solve`` would).  Then every
option the caller gave must be one the compiled path implements:

* a numeric option of :data:`.kernels.slots.OPTION_NAMES` (any valid value);
* an option whose given value is the behaviour the compiled path has
  (:data:`SAME_BEHAVIOUR`), e.g. ``mu_strategy='monotone'`` or ``print_level=0``.

Anything else makes :func:`unsupported_reason` return a reason, and the caller runs the
general path.  Output options are all implemented: the compiled path prints the general
path's log and summary after the solve (:func:`.solve.solve_checked`).
"""
from __future__ import annotations

import numpy as np

from ..kkt.augmented import AugmentedKKT
from ..solver.compat import substituted
from ..solver.initial import warm_start_pushes
from ..solver.options import resolved_options
from .kernels.slots import OPTION_NAMES, OPT_KKT_STATIC_REGULARIZATION_PIVOTING, \
    OPT_NLP_SCALING_GRADIENT_BASED, OPT_PRIVATE_PIVOT_FRACTION, OPT_WARM_START_BOUND_PUSH, \
    OPT_WARM_START_SLACK_BOUND_FRAC

#: options the kernels read (their values go into the option vector)
IMPLEMENTED = frozenset(OPTION_NAMES[:OPT_NLP_SCALING_GRADIENT_BASED]
                        + OPTION_NAMES[OPT_NLP_SCALING_GRADIENT_BASED + 1:
                                       OPT_PRIVATE_PIVOT_FRACTION]
                        + OPTION_NAMES[OPT_PRIVATE_PIVOT_FRACTION + 1:
                                       OPT_KKT_STATIC_REGULARIZATION_PIVOTING])

#: the shortest max_wall_time / max_cpu_time (seconds) a *batch* takes the kernels with.
#: A single solve takes any limit: a thread sets the kernel's stop slot when it passes
#: (:mod:`.deadline`), and the kernel ends as the general path would.  A batch's kernel
#: calls are not watched, but each is bounded by an iteration budget of about
#: ``solve.TIME_BUDGET`` (0.5 s) of a typical core, so a limit 20 times that holds on a
#: core 20x slower than the cost model's.  A solve the kernel hands over continues on the
#: general path, whose clocks count the attempt (``Problem.solve``): the limit bounds the
#: whole solve either way.  A batch given a shorter limit solves in lockstep
TIME_LIMIT_MIN = 10.0
#: the options a single solve's kernel answers whatever their value (:mod:`.deadline`)
CLOCKED = frozenset(("max_wall_time", "max_cpu_time"))

#: option -> test of a value that behaves as the compiled path does
SAME_BEHAVIOUR = {
    "print_level": lambda v: True,              # the log is printed after the solve
    "file_print_level": lambda v: True,
    "output_file": lambda v: True,
    "file_append": lambda v: True,
    "stream": lambda v: True,
    "print_frequency_iter": lambda v: True,
    "print_user_options": lambda v: True,
    "sb": lambda v: True,                       # banner suppression: nothing is printed
    "compiled_path": lambda v: True,            # how the caller got here
    "cpu_evaluator": lambda v: True,            # the kernels evaluate with the tape
    "print_timing_statistics": lambda v: not v,
    "timing_statistics": lambda v: True,        # host timers: exact either way
    "mu_strategy": lambda v: v == "monotone",
    "hessian_approximation": lambda v: v == "exact",
    "kkt_system": lambda v: v == "augmented",
    "inertia_correction_method": lambda v: v == "inertia-based",
    # (an IPOPT solver caspar does not have -- mumps, ma27, ... -- runs as qdldl on the
    # CPU, with the general path's warning: solver/compat.py)
    "linear_solver": lambda v: v == "qdldl" or substituted(v),
    "device": lambda v: v == "cpu",
    "start_with_resto": lambda v: not v,
    "least_square_init_duals": lambda v: not v,
    "iteration_callback": lambda v: v is None,
    "derivative_test": lambda v: v == "none",
    "max_wall_time": lambda v: v >= TIME_LIMIT_MIN,
    "max_cpu_time": lambda v: v >= TIME_LIMIT_MIN,
    # IPOPT's defaults of behaviour options the kernels have as such
    "recalc_y": lambda v: not v,
    "bound_mult_init_method": lambda v: v == "constant",
    "honor_original_bounds": lambda v: not v,
    "fixed_variable_treatment": lambda v: v == "make_parameter",
    "expect_infeasible_problem": lambda v: not v,
    # gradient-based and none (the option vector's OPT_NLP_SCALING_GRADIENT_BASED); the
    # user's factors reach only the general path (solve_nlp's user_scaling)
    "nlp_scaling_method": lambda v: v != "user-scaling",
}
#: options any value of which behaves as the compiled path does
SAME_BEHAVIOUR.update(dict.fromkeys((
    # the bounds reach the kernels with these applied (dispatch.try_solve)
    "nlp_lower_bound_inf", "nlp_upper_bound_inf",
    # the soft restoration and the restoration phase run on the general path (the
    # kernels hand the solve over where the line search fails, at that iteration's
    # start: the general path repeats it and goes on with these)
    "max_resto_iter", "soft_resto_pderror_reduction_factor", "max_soft_resto_iters",
    "required_infeasibility_reduction", "resto_penalty_parameter",
    "bound_mult_reset_threshold", "constr_mult_reset_threshold"), lambda v: True))


def _adaptive(v) -> bool:
    return v == "adaptive"


#: option -> (the option that switches it on, test of a value of that option that does):
#: while the switch is off -- as it is wherever the kernels run (SAME_BEHAVIOUR) -- the
#: option changes nothing on the general path either, so any value of it is the
#: compiled path's (a script that sets IPOPT's defaults explicitly stays on the kernels)
INERT_UNLESS = {
    # the adaptive barrier update's (solver/mu.py, solver/mu_oracles.py; mu_min also in
    # the restoration phase, which runs on the general path)
    **{name: ("mu_strategy", _adaptive) for name in (
        "mu_oracle", "adaptive_mu_globalization", "mu_min", "mu_max", "sigma_max",
        "sigma_min", "quality_function_max_section_steps",
        "quality_function_section_sigma_tol", "quality_function_section_qf_tol",
        "filter_margin_fact", "filter_max_margin")},
    **{name: ("hessian_approximation", lambda v: v == "limited-memory") for name in (
        "limited_memory_max_history", "limited_memory_max_skipping")},
    "inertia_free_tol": ("inertia_correction_method", lambda v: v == "inertia-free"),
    "recalc_y_feas_tol": ("recalc_y", bool),
    "expect_infeasible_problem_ctol": ("expect_infeasible_problem", bool),
    "expect_infeasible_problem_ytol": ("expect_infeasible_problem", bool),
    **{name: ("derivative_test", lambda v: v != "none") for name in (
        "derivative_test_tol", "derivative_test_perturbation", "derivative_test_print_all")},
    **{name: ("linear_solver", lambda v: v == "pardisomkl") for name in (
        "pardisomkl_order", "pardisomkl_matching_strategy",
        "pardisomkl_max_iterative_refinement_steps", "pardisomkl_msglvl",
        "pardisomkl_repeated_perturbation_means_singular")},
}


#: options that shape only how a solve starts (least-squares bound multipliers, a first
#: restoration phase; IPOPT's warm start the kernels do themselves): the kernels start
#: their own way, but a solve
#: started by the general path goes on in them
#: (:data:`~caspar_backend.solver.resume.FRESH_START`)
START_OPTIONS = frozenset(("least_square_init_duals", "start_with_resto"))


def unsupported_reason(opts, clocked: bool = False, started: bool = False) -> str:
    """'' if the compiled path implements every option of ``opts`` (validated
    :class:`~caspar_backend.solver.options.Options`), else the first reason.
    ``clocked``: a single solve, whose time limits a thread watches (:data:`CLOCKED`);
    ``started``: kernels that take over a started solve (:data:`START_OPTIONS`)."""
    user = opts.user
    for name, value in user.items():
        if (name in IMPLEMENTED or (clocked and name in CLOCKED)
                or (started and name in START_OPTIONS)):
            continue
        inert = INERT_UNLESS.get(name)
        if inert is not None and not inert[1](opts[inert[0]]):
            continue
        ok = SAME_BEHAVIOUR.get(name)
        if ok is None or not ok(value):
            return f"option {name}={value!r}"
    return ""


_vectors: dict = {}        # options given (sorted items) -> O; bounded, see option_vector


def option_vector(opts) -> np.ndarray:
    """The float64 vector ``O`` of the kernels (:data:`OPTION_NAMES` order); shared, not
    to be written (it stays writeable: a read-only array is another Numba type, which
    would compile the kernels a second time).  Memoized by the options given."""
    try:
        key = tuple(sorted(opts.user.items()))
        hash(key)
    except TypeError:            # an unhashable value (a callback): no memo
        key = None
    O = _vectors.get(key) if key is not None else None
    if O is None:
        O = _option_vector(opts)
        if key is not None and len(_vectors) < 256:
            _vectors[key] = O
    return O


def _option_vector(opts) -> np.ndarray:
    O = np.zeros(len(OPTION_NAMES))
    for k, name in enumerate(OPTION_NAMES):
        if k == OPT_NLP_SCALING_GRADIENT_BASED:
            O[k] = 1.0 if opts.nlp_scaling_method == "gradient-based" else 0.0
        elif k == OPT_PRIVATE_PIVOT_FRACTION:
            O[k] = AugmentedKKT.PRIVATE_PIVOT_FRACTION
        elif k == OPT_KKT_STATIC_REGULARIZATION_PIVOTING:
            # a K factorized with pivoting takes no static term unless the user set one
            # (solver/ipm.py: the general path's rule)
            O[k] = (float(opts.kkt_static_regularization)
                    if "kkt_static_regularization" in opts.user else 0.0)
        elif OPT_WARM_START_BOUND_PUSH <= k <= OPT_WARM_START_SLACK_BOUND_FRAC:
            pass                  # below: the pushes a warm start uses
        else:
            O[k] = float(opts[name])
    O[OPT_WARM_START_BOUND_PUSH:OPT_WARM_START_SLACK_BOUND_FRAC + 1] = warm_start_pushes(opts)
    return O


def resolve(options, clocked: bool = False, started: bool = False):
    """(validated Options, '' or the reason the compiled path does not apply); the
    Options memoized for the same options given (:func:`~caspar_backend.solver.options.
    resolved_options`: shared, never write it).  ``clocked``, ``started``: as
    :func:`unsupported_reason`'s."""
    opts = resolved_options(options)
    return opts, unsupported_reason(opts, clocked, started)
