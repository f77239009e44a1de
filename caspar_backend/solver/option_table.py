"""The solver's option table: one :class:`Option` row per option (name, type, default,
allowed values or range, documentation), IPOPT's names and meanings; caspar's own options
say so in their documentation.  :mod:`.options` validates a user's dict against it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .linear_solver_names import CASPAR_LINEAR_SOLVERS, IPOPT_LINEAR_SOLVERS

_INF = math.inf


@dataclass(frozen=True)
class Option:
    """One option row: ``type`` is ``float``, ``int``, ``str``, ``bool`` or ``object``;
    ``choices`` lists allowed strings; ``low``/``high`` bound numbers, inclusive unless
    ``low_open``/``high_open`` (IPOPT's ranges: ``tol`` is ``0 < value``,
    ``bound_relax_factor`` ``0 <= value``; tests/solver/data/ipopt_option_ranges.txt)."""

    name: str
    type: type
    default: Any
    doc: str
    choices: tuple = ()
    low: float = -_INF
    high: float = _INF
    low_open: bool = False
    high_open: bool = False

    def admits(self, value) -> bool:
        """``value`` (a number) lies in the option's range."""
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def range_text(self) -> str:
        """The range as IPOPT prints it: ``0 < value``, ``0 < value < 1``, ..."""
        parts = []
        if self.low > -_INF:
            parts.append(f"{self.low:g} {'<' if self.low_open else '<='} ")
        parts.append("value")
        if self.high < _INF:
            parts.append(f" {'<' if self.high_open else '<='} {self.high:g}")
        return "".join(parts)


def _o(name, typ, default, doc, choices=(), low=-_INF, high=_INF, low_open=False,
       high_open=False):
    return Option(name, typ, default, doc, tuple(choices), low, high, low_open, high_open)


_ROWS = [
    # ---------------------------------------------------------------- termination
    _o("tol", float, 1e-8, "Relative convergence tolerance on the scaled overall NLP "
       "error E_0 (Waechter & Biegler eq. 5).", low=0.0, low_open=True),
    _o("max_iter", int, 3000, "Maximum number of iterations (restoration included).", low=0),
    _o("max_wall_time", float, 1e20, "Maximum wall-clock seconds of the solve.", low=0.0,
       low_open=True),
    _o("max_cpu_time", float, 1e20, "Maximum CPU seconds of the solve (this process's "
       "time.process_time(), all threads); exceeded: Maximum_CpuTime_Exceeded.", low=0.0,
       low_open=True),
    _o("dual_inf_tol", float, 1.0, "Absolute tolerance on the unscaled dual infeasibility.",
       low=0.0, low_open=True),
    _o("constr_viol_tol", float, 1e-4, "Absolute tolerance on the unscaled constraint "
       "violation.", low=0.0, low_open=True),
    _o("compl_inf_tol", float, 1e-4, "Absolute tolerance on the unscaled complementarity.",
       low=0.0, low_open=True),
    _o("acceptable_tol", float, 1e-6, "'Acceptable' tolerance on the scaled NLP error.",
       low=0.0, low_open=True),
    _o("acceptable_iter", int, 15, "Consecutive acceptable iterations before stopping with "
       "Solved_To_Acceptable_Level (0 disables).", low=0),
    _o("acceptable_constr_viol_tol", float, 1e-2, "Acceptable unscaled constraint violation.",
       low=0.0, low_open=True),
    _o("acceptable_dual_inf_tol", float, 1e10, "Acceptable unscaled dual infeasibility.",
       low=0.0, low_open=True),
    _o("acceptable_compl_inf_tol", float, 1e-2, "Acceptable unscaled complementarity.",
       low=0.0, low_open=True),
    _o("acceptable_obj_change_tol", float, 1e20, "Acceptable relative objective change "
       "between iterations.", low=0.0),
    _o("diverging_iterates_tol", float, 1e20, "Iterates with max-norm above this stop the "
       "solve with Diverging_Iterates.", low=0.0, low_open=True),
    # ---------------------------------------------------------------- barrier parameter
    _o("mu_strategy", str, "monotone", "Barrier update: Fiacco-McCormick 'monotone' or "
       "IPOPT's 'adaptive' (mu_oracle, adaptive_mu_globalization).  Not set: 'adaptive' "
       "with hessian_approximation 'limited-memory' (as IPOPT).", ("monotone", "adaptive")),
    _o("recalc_y", bool, False, "Least-squares constraint multipliers after every step "
       "whose infeasibility (1-norm) is below recalc_y_feas_tol.  Not set: on with "
       "hessian_approximation 'limited-memory' (as IPOPT).", ()),
    _o("recalc_y_feas_tol", float, 1e-6, "Infeasibility below which recalc_y recomputes "
       "the multipliers.", low=0.0, low_open=True),
    _o("adaptive_mu_globalization", str, "obj-constr-filter", "Progress test of the "
       "adaptive update's free mode: 'obj-constr-filter' (the iterate's objective and "
       "constraint violation acceptable to a filter of the accepted ones), 'kkt-error' "
       "(the KKT error 0.9999 times one of the last 4 accepted) or 'never-monotone-mode'.",
       ("obj-constr-filter", "kkt-error", "never-monotone-mode")),
    _o("mu_oracle", str, "quality-function", "The adaptive update's free-mode rule for "
       "sigma = mu / avg complementarity: 'quality-function' (the sigma minimizing a "
       "quality function along the affine and centering steps), 'probing' (Mehrotra's, "
       "from the affine step) or 'loqo' (LOQO's centrality rule).",
       ("quality-function", "probing", "loqo")),
    _o("sigma_max", float, 100.0, "Largest sigma of the quality-function and probing "
       "oracles.", low=0.0, low_open=True),
    _o("sigma_min", float, 1e-6, "Smallest sigma of the quality-function oracle.",
       low=0.0),
    _o("quality_function_max_section_steps", int, 8, "Most golden-section steps of the "
       "quality-function oracle.", low=0),
    _o("quality_function_section_sigma_tol", float, 0.01, "Relative sigma tolerance of "
       "the quality-function oracle's golden-section search.", low=0.0, high=1.0, high_open=True),
    _o("quality_function_section_qf_tol", float, 0.0, "Relative quality tolerance of "
       "the quality-function oracle's golden-section search.", low=0.0, high=1.0, high_open=True),
    _o("filter_margin_fact", float, 1e-5, "Margin factor of the obj-constr-filter "
       "progress test: the margin is this times min(filter_max_margin, E0).", low=0.0,
       high=1.0, low_open=True, high_open=True),
    _o("filter_max_margin", float, 1.0, "Largest margin of the obj-constr-filter test, "
       "before the factor.", low=0.0, low_open=True),
    _o("mu_init", float, 0.1, "Initial barrier parameter.", low=0.0, low_open=True),
    _o("mu_min", float, 1e-11, "Lower bound on mu in adaptive mode; when not set, "
       "min(1e-11, tol / 2, compl_inf_tol posed to the scaled problem / 2), as in IPOPT.",
       low=0.0, low_open=True),
    _o("mu_max", float, 1e5, "Upper bound on mu in adaptive mode; when not set, 1000 times "
       "the average complementarity at the first update, as in IPOPT.", low=0.0, low_open=True),
    _o("mu_linear_decrease_factor", float, 0.2, "kappa_mu: linear part of the monotone "
       "update mu <- max(mu floor, min(kappa_mu mu, mu^theta_mu)).", low=0.0, high=1.0,
       low_open=True, high_open=True),
    _o("mu_superlinear_decrease_power", float, 1.5, "theta_mu of the monotone update.",
       low=1.0, high=2.0, low_open=True, high_open=True),
    _o("barrier_tol_factor", float, 10.0, "kappa_eps: the barrier problem counts as solved "
       "when E_mu <= kappa_eps mu.", low=0.0, low_open=True),
    _o("tau_min", float, 0.99, "Lower bound on the fraction-to-the-boundary parameter.",
       low=0.0, high=1.0, low_open=True, high_open=True),
    _o("tiny_step_tol", float, 10.0 * 2.220446049250313e-16, "A step with max_i |dw_i| / "
       "(1 + |w_i|) below this is tiny: taken without line search (0: none is).", low=0.0),
    _o("tiny_step_y_tol", float, 1e-2, "A tiny step after one whose multiplier step "
       "|dy|_inf was below this asks the barrier update for a decrease, at mu's floor "
       "the end: Search_Direction_Becomes_Too_Small.", low=0.0),
    # ---------------------------------------------------------------- problem
    _o("nlp_lower_bound_inf", float, -1e19, "Any bound less or equal this value is "
       "taken as -infinity (variables and constraints)."),
    _o("nlp_upper_bound_inf", float, 1e19, "Any bound greater or equal this value is "
       "taken as +infinity (variables and constraints)."),
    # ---------------------------------------------------------------- initialisation
    _o("bound_push", float, 1e-2, "kappa_1: minimum relative distance of x0 from bounds.",
       low=0.0, low_open=True),
    _o("bound_frac", float, 1e-2, "kappa_2: minimum distance of x0 from bounds as a "
       "fraction of the bound interval.", low=0.0, high=0.5, low_open=True),
    _o("slack_bound_push", float, 1e-2, "bound_push for the slacks of inequalities; "
       "unless given, bound_push's value (IPOPT's).", low=0.0, low_open=True),
    _o("slack_bound_frac", float, 1e-2, "bound_frac for the slacks of inequalities; "
       "unless given, bound_frac's value (IPOPT's).", low=0.0, high=0.5, low_open=True),
    _o("bound_relax_factor", float, 1e-8, "Bounds are relaxed by this factor times "
       "max(1, |bound|) (equality constraints and fixed variables excepted).", low=0.0),
    # eps^(3/4), IPOPT's default
    _o("slack_move", float, 2.0 ** -39, "Correction size for very "
       "small slacks: a slack below eps min(1, mu) is replaced by min(max(mu / z, eps "
       "min(1, mu)), slack + slack_move max(1, |bound|)) (z its bound multiplier).",
       low=0.0),
    _o("bound_mult_init_method", str, "constant", "Initial bound multipliers: 'constant' "
       "(bound_mult_init_val) or 'mu-based' (mu_init / slack at the starting point).",
       ("constant", "mu-based")),
    _o("bound_mult_init_val", float, 1.0, "Initial value of the bound multipliers.",
       low=0.0, low_open=True),
    _o("constr_mult_init_max", float, 1e3, "Least-squares constraint multipliers larger "
       "than this (max-norm) are discarded for zero.", low=0.0),
    _o("constr_mult_reset_threshold", float, 0.0, "After the restoration phase the "
       "constraint multipliers are the least-squares ones, discarded for zero above this "
       "(max-norm); 0: always zero.", low=0.0),
    _o("bound_mult_reset_threshold", float, 1e3, "After the restoration phase all bound "
       "multipliers are reset to 1 when one exceeds this.", low=0.0),
    _o("least_square_init_duals", bool, False, "Also estimate the bound multipliers by "
       "least squares (kept at bound_mult_init_val when False).", ()),
    _o("warm_start_init_point", bool, False, "'yes': start from the given multipliers "
       "lam_g0 / lam_x0 (IPOPT's WarmStartIterateInitializer, with the warm_start_* "
       "pushes below); 'no': ignore them, as IPOPT does (least-squares y, bound "
       "multipliers bound_mult_init_val)."),
    _o("warm_start_bound_push", float, 1e-3, "bound_push of a warm start; when not "
       "given, bound_push's value (IPOPT's WarmStartIterateInitializer).", low=0.0, low_open=True),
    _o("warm_start_bound_frac", float, 1e-3, "bound_frac of a warm start; when not "
       "given, bound_frac's value.", low=0.0, high=0.5, low_open=True),
    _o("warm_start_slack_bound_push", float, 1e-3, "slack_bound_push of a warm start; "
       "when not given, bound_push's value (IPOPT's rule).", low=0.0, low_open=True),
    _o("warm_start_slack_bound_frac", float, 1e-3, "slack_bound_frac of a warm start; "
       "when not given, bound_frac's value (IPOPT's rule).", low=0.0, high=0.5, low_open=True),
    _o("warm_start_mult_bound_push", float, 1e-3, "Warm-start bound multipliers (variables "
       "and inequality slacks) are raised to at least this.", low=0.0, low_open=True),
    _o("warm_start_mult_init_max", float, 1e6, "Warm-start multipliers are clipped to "
       "this magnitude (IPOPT's rule: a value <= 0 clips nothing)."),
    # ---------------------------------------------------------------- scaling
    _o("nlp_scaling_method", str, "gradient-based", "Problem scaling: 'gradient-based' "
       "scales f and each g_i so their gradient max-norm at x0 is at most "
       "nlp_scaling_max_gradient; 'user-scaling' takes the user's factors of f, x and g "
       "(Pyomo's 'scaling_factor' Suffix; solve_nlp's user_scaling); 'none' scales "
       "nothing.", ("gradient-based", "user-scaling", "none")),
    _o("nlp_scaling_max_gradient", float, 100.0, "Target gradient max-norm of the scaling.",
       low=0.0, low_open=True),
    _o("nlp_scaling_min_value", float, 1e-8, "Smallest scaling factor.", low=0.0),
    _o("obj_scaling_factor", float, 1.0, "User factor multiplying the objective (on top of "
       "gradient-based scaling); negative maximises.", ),
    # ---------------------------------------------------------------- Hessian
    _o("hessian_approximation", str, "exact", "'exact' Lagrangian Hessian or "
       "'limited-memory' L-BFGS (compact form inside the augmented system).",
       ("exact", "limited-memory")),
    _o("limited_memory_max_history", int, 6, "Number of (s, y) pairs kept by L-BFGS (0: "
       "B = sigma I from the newest pair alone, as IPOPT).", low=0),
    _o("limited_memory_max_skipping", int, 2, "Reset L-BFGS after this many consecutive "
       "skipped updates.", low=1),
    # ---------------------------------------------------------------- linear algebra
    _o("linear_solver", str, "qdldl", "Sparse symmetric indefinite solver with inertia: "
       "'qdldl' (host), 'pardisomkl' (host, MKL's PARDISO: the 'mkl' extra) or 'cudss' "
       "(CUDA).  Left unset, the device decides: qdldl on the CPU, cudss on CUDA.  "
       "IPOPT's other names (ma27, mumps, ...), and 'pardisomkl' without MKL, are "
       "accepted with a warning and mean 'left unset'.",
       tuple(dict.fromkeys(CASPAR_LINEAR_SOLVERS + IPOPT_LINEAR_SOLVERS))),
    # IPOPT's options of linear_solver='pardisomkl' (linsolve/pardiso_mkl.py)
    _o("pardisomkl_order", str, "metis", "PARDISO's fill-reducing order (iparm[1]).",
       ("amd", "one", "metis", "pmetis")),
    _o("pardisomkl_matching_strategy", str, "complete", "PARDISO's weighted matching "
       "(iparm[12] 1, 2, 3).  IPOPT's default is 'complete+2x2'; caspar's 'complete' "
       "(Pyomo's lqcp, n = 100, tol 1e-10, after the switch to PARDISO: optimal, "
       "'complete+2x2' only acceptable).", ("complete", "complete+2x2", "constraints")),
    _o("pardisomkl_max_iterative_refinement_steps", int, 1, "PARDISO's own refinement "
       "steps (iparm[7]); caspar refines against K after it as well."),
    _o("pardisomkl_msglvl", int, 0, "PARDISO's statistics on standard output (msglvl).",
       low=0, high=1),
    _o("pardisomkl_repeated_perturbation_means_singular", str, "yes", "Pivots PARDISO "
       "perturbs again after a fresh analysis make K singular (the inertia correction "
       "regularizes it).  IPOPT's default is 'no'; caspar's 'yes': with 'no' a "
       "duplicated equality constraint ran 3,000 iterations instead of IPOPT's 5.",
       ("yes", "no")),
    _o("kkt_system", str, "augmented", "caspar: the Newton system factorized each "
       "iteration (restoration phases included; result.extra['kkt_system'] says which "
       "ran).  'augmented': the full symmetric indefinite system (LDL^T with inertia).  "
       "'condensed': equalities are relaxed to a band (equality_relax_factor), every "
       "constraint gets a slack, and slacks and multipliers are eliminated, leaving a "
       "positive definite system in the variables (Shin, Pacaud & Anitescu's lifted KKT "
       "system; MadNLP's SparseCondensedKKTSystem); needs "
       "hessian_approximation='exact'.", ("augmented", "condensed")),
    _o("fixed_variable_treatment", str, "make_parameter", "Variables with equal bounds "
       "are removed from the problem ('make_parameter', their multiplier is minus the "
       "reduced gradient; 'make_parameter_nodual': 0) or kept with relaxed bounds "
       "('relax_bounds', also IPOPT's choice when removing them leaves fewer free "
       "variables than equalities: solver/fixed.py); 'make_constraint' is treated as "
       "make_parameter with a warning.", ("make_parameter", "make_parameter_nodual",
                                          "relax_bounds", "make_constraint")),
    _o("honor_original_bounds", bool, False, "'yes': the returned x is projected onto "
       "the user's bounds (the iterates live inside bounds relaxed by "
       "bound_relax_factor).  IPOPT 3.14's default 'no'."),
    _o("equality_relax_factor", float, 1e-9, "caspar, with kkt_system='condensed': each "
       "equality g_i = b_i becomes b_i - d_i <= g_i <= b_i + d_i with d_i = "
       "min(constr_viol_tol, equality_relax_factor * max(1, |b_i|)).  The band moves the "
       "optimum by about sum |y_i| d_i (AC-OPF case300: 6e-7 relative at 1e-8, 6e-8 at "
       "1e-9); "
       "positive: a band of width zero leaves the slack no interior.", low=1e-16,
       high=1.0),
    _o("max_refinement_steps", int, 10, "Maximum iterative-refinement steps per solve.",
       low=0),
    _o("residual_ratio_max", float, 1e-10, "Iterative refinement stops below this relative "
       "residual.", low=0.0, low_open=True),
    _o("refinement_contraction_max", float, 0.1, "caspar: a refinement with a static "
       "term that converged with a last-step residual contraction above this is redone "
       "with a smaller static term (kkt/refinement.py: slow contraction leaves the "
       "directions of K's eigenvalues below the term unresolved); >= 1 turns it off.",
       low=0.0),
    _o("kkt_static_regularization", float, 1e-9, "caspar: +-eps added to the KKT "
       "diagonal blocks when factorizing without pivoting (qdldl, cudss; unset: 0 with "
       "pardisomkl; on cuDSS's Bunch-Kaufman the constraint rows take 1e-4 eps); removed "
       "again by iterative refinement.", low=0.0),
    _o("inertia_correction_method", str, "inertia-based", "caspar (MadNLP's name): how a "
       "factorization is accepted before delta_w is raised.  'inertia-based': the "
       "inertia of the KKT matrix is (nw, m, 0) (IPOPT's Algorithm IC).  'inertia-free': "
       "the inertia is not read; the direction passes Chiang & Zavala's curvature test "
       "t'Ht + max(t'Hn - g'n, 0) >= inertia_free_tol t't (n the normal step, t = dw - n, "
       "H = W + Sigma + delta_w I, g the barrier Lagrangian's gradient) -- one more "
       "solve per factorization, for linear solvers whose inertia is not exact "
       "(kkt_system 'augmented', exact Hessian).", ("inertia-based", "inertia-free")),
    _o("inertia_free_tol", float, 0.0, "caspar (MadNLP's name): the curvature test's "
       "margin with inertia_correction_method 'inertia-free'.", low=0.0),
    _o("first_hessian_perturbation", float, 1e-4, "delta_w^0: first trial Hessian "
       "perturbation.", low=0.0, low_open=True),
    _o("min_hessian_perturbation", float, 1e-20, "delta_w^min.", low=0.0),
    _o("max_hessian_perturbation", float, 1e20, "delta_w^max: above it the step "
       "computation fails.", low=0.0, low_open=True),
    _o("perturb_inc_fact_first", float, 100.0, "kappa_w^+bar.", low=1.0, low_open=True),
    _o("perturb_inc_fact", float, 8.0, "kappa_w^+.", low=1.0, low_open=True),
    _o("perturb_dec_fact", float, 1.0 / 3.0, "kappa_w^-.", low=0.0, high=1.0, low_open=True,
       high_open=True),
    _o("jacobian_regularization_value", float, 1e-8, "delta_c bar.", low=0.0),
    _o("jacobian_regularization_exponent", float, 0.25, "kappa_c: delta_c = "
       "delta_c_bar mu^kappa_c.", low=0.0),
    # ---------------------------------------------------------------- line search
    _o("max_soc", int, 4, "Maximum number of second-order corrections per iteration.",
       low=0),
    _o("kappa_soc", float, 0.99, "Required reduction of the infeasibility per "
       "second-order correction.", low=0.0, low_open=True),
    _o("theta_max_fact", float, 1e4, "theta_max = theta_max_fact max(1, theta(x0)).",
       low=0.0, low_open=True),
    _o("theta_min_fact", float, 1e-4, "theta_min = theta_min_fact max(1, theta(x0)).",
       low=0.0, low_open=True),
    _o("kappa_d", float, 1e-5, "Weight of the linear damping term for variables bounded "
       "on one side only.", low=0.0),
    _o("alpha_red_factor", float, 0.5, "Backtracking step reduction factor.",
       low=0.0, high=1.0, low_open=True, high_open=True),
    # IPOPT's default, 5, counted as documented (IPOPT 3.14 never increments its counter
    # and resets without limit; solver/filter.py says why the limit is kept)
    _o("max_filter_resets", int, 5, "Maximal number of filter resets per solve (the "
       "filter reset heuristic; 0 disables it).", low=0),
    _o("filter_reset_trigger", int, 5, "Number of successive iterations whose last "
       "rejected trial point failed the filter that trigger a filter reset.", low=1),
    _o("soft_resto_pderror_reduction_factor", float, 1.0 - 1e-4, "Required reduction "
       "of the primal-dual error by a soft restoration step; 0 disables the soft "
       "restoration phase.", low=0.0),
    _o("max_soft_resto_iters", int, 10, "Maximum number of successive soft restoration "
       "iterations.", low=0),
    _o("watchdog_shortened_iter_trigger", int, 10, "Number of consecutive shortened "
       "iterations (first trial step rejected) that trigger the watchdog procedure; 0 "
       "disables it.", low=0),
    _o("watchdog_trial_iter_max", int, 3, "Maximum number of watchdog iterations before "
       "the stored iterate is restored.", low=1),
    _o("obj_max_inc", float, 5.0, "Reject trial points whose barrier objective grows by "
       "more than this many orders of magnitude.", low=1.0, low_open=True),
    _o("kappa_sigma", float, 1e10, "Bound-multiplier safeguard factor (below 1: no "
       "safeguard, as IPOPT).", low=0.0, low_open=True),
    # ---------------------------------------------------------------- restoration
    _o("start_with_resto", bool, False, "Begin with the feasibility restoration phase."),
    _o("expect_infeasible_problem", bool, False, "Heuristics that detect an infeasible "
       "problem sooner: the restoration phase is entered after five shortened steps in a "
       "row or when a constraint multiplier exceeds expect_infeasible_problem_ytol, no "
       "soft restoration or watchdog meanwhile, and the first restoration phase must "
       "reduce the infeasibility to 1e-3 of its start (unless "
       "required_infeasibility_reduction is set); off once the infeasibility is at most "
       "expect_infeasible_problem_ctol, or after a restoration phase."),
    _o("expect_infeasible_problem_ctol", float, 1e-3, "Constraint violation (1-norm) at "
       "which the expect_infeasible_problem heuristics end (0 for a square problem).",
       low=0.0),
    _o("expect_infeasible_problem_ytol", float, 1e8, "Constraint multiplier size (max "
       "norm) above which expect_infeasible_problem enters the restoration phase.",
       low=0.0, low_open=True),
    _o("required_infeasibility_reduction", float, 0.9, "kappa_resto: restoration returns "
       "once theta <= this times its value at restoration start.", low=0.0, high=1.0,
       high_open=True),
    _o("resto_penalty_parameter", float, 1000.0, "rho of the restoration objective.",
       low=0.0, low_open=True),
    _o("max_resto_iter", int, 3000000, "Iterations one restoration phase may take; past "
       "them the solve ends with Maximum_Iterations_Exceeded (IPOPT's "
       "RestoConvergenceCheck).", low=0),
    # ---------------------------------------------------------------- output
    _o("print_level", int, 5, "0 is silent; >= 1 prints the summary; >= 3 adds the "
       "problem's counts of variables and constraints; >= 5 the version line, the "
       "derivatives' nonzeros and the iteration log (IPOPT's levels).", low=0, high=12),
    _o("print_user_options", bool, False, "Print the options the user set."),
    _o("print_timing_statistics", bool, False, "Print the per-phase timing table."),
    _o("timing_statistics", bool, True, "GPU phase times exact: the device is waited "
       "for at each phase's end (~8 waits per iteration, no measurable cost on the H200); "
       "'no': the loop runs ahead, device work counted where the host next waits."),
    _o("sb", bool, False, "IPOPT's 'suppress banner'; accepted (caspar prints no banner)."),
    _o("print_frequency_iter", int, 1, "Print the iteration line of every k-th "
       "iteration only (iteration number divisible by k).", low=1),
    _o("output_file", str, "", "Also write the output to this file (empty: none), at "
       "file_print_level."),
    _o("file_print_level", int, 5, "print_level of output_file.", low=0, high=12),
    _o("file_append", bool, False, "'yes': append to output_file instead of replacing it."),
    _o("derivative_test", str, "none", "Finite-difference check of the derivatives at "
       "the starting point before the solve (caspar_backend.derivative_check): "
       "'first-order' gradient and Jacobian, 'second-order' also the Hessian, "
       "'only-second-order' the Hessian only.",
       ("none", "first-order", "second-order", "only-second-order")),
    _o("derivative_test_tol", float, 1e-4, "Relative error above which derivative_test "
       "reports an entry.", low=0.0, low_open=True),
    _o("derivative_test_perturbation", float, 1e-8, "Relative finite-difference step of "
       "derivative_test.", low=0.0, low_open=True),
    _o("derivative_test_print_all", bool, False, "'yes': the derivative test lists every "
       "entry compared ('*' marks those above derivative_test_tol); 'no': only those."),
    _o("stream", object, None, "File-like object for the output (default sys.stdout)."),
    # ---------------------------------------------------------------- caspar
    _o("device", str, "cpu", "Where the solver runs: 'cpu' (NumPy + qdldl), 'cuda' "
       "(CUDA evaluator + cuDSS, iterates in device memory; an error saying what to "
       "install when not usable) or 'auto' (CUDA when usable and n + m >= "
       "caspar_backend.device.AUTO_MIN_SIZE = 10,000, the measured break-even). "
       "Left unset, the solve runs where the evaluator lives.", ("cpu", "cuda", "auto")),
    _o("cpu_evaluator", str, "auto", "caspar: how the general path evaluates the model on "
       "the CPU.  'tape': the compiled kernels' tape interpreter (caspar_backend.compiled."
       "tape_evaluator; one pass per evaluation, the compiled path's arithmetic), "
       "compiling the kernels first if needed; 'numpy': the generated NumPy code; 'auto': "
       "the tape when the kernels are compiled on this machine, else NumPy.  Models with "
       "an expression the tape has no op code for, host functions or a given Hessian use "
       "NumPy.", ("auto", "tape", "numpy")),
    _o("compiled_path", str, "auto", "caspar: solve on the CPU with the compiled interior "
       "point (caspar_backend.compiled; with numba): the same algorithm "
       "and iterates as the general path without Python per iteration.  'auto': when "
       "its kernels are compiled on this machine (in the background on first use, or "
       "ahead by `caspar warmup`) and n + m <= caspar_backend.compiled.dispatch."
       "AUTO_MAX_SIZE; 'yes': whenever it applies, compiling first if needed; 'no': "
       "never.  Options, models and rare paths it does not implement (restoration, fixed "
       "variables, time limits, ...) are solved by the general path.",
       ("auto", "yes", "no")),
    _o("iteration_callback", object, None, "caspar: callable(ipm) called at the start of "
       "every iteration with the interior-point state (diagnostics and tests)."),
]

#: the option table, by name
OPTIONS: Mapping[str, Option] = MappingProxyType({o.name: o for o in _ROWS})
