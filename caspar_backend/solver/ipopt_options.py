"""IPOPT's options that are not rows of caspar's option table, and what caspar does with
each, so that an IPOPT option dict is never refused as unknown (IPOPT 3.14's 282 options:
``tests/solver/data/ipopt_options.txt``; the table's own rows are
:mod:`.option_table`).

* :data:`IPOPT_NO_EFFECT` -- options that cannot change caspar's answer: ``name ->
  (values accepted silently, why another value is ignored)``; another value is accepted
  with a warning naming the reason (``()``: every value silently).
* :data:`IPOPT_ONE_VALUE` -- options choosing among IPOPT algorithms or constants of
  which caspar implements one: ``name -> (the implemented values, what caspar
  implements)``; another value raises :class:`~caspar_backend.errors.OptionError`, since
  the solve would not be the one asked for.  Numbers compare by value, booleans as
  'yes'/'no'.

IPOPT's linear solvers' options are :mod:`.linear_solver_names`' (ignored, warned).
"""

from __future__ import annotations

_EVERY = ()          # every value silently

IPOPT_NO_EFFECT = {
    # every evaluation is checked for NaN and Inf (Invalid_Number_Detected, naming it)
    "check_derivatives_for_naninf": (("yes", "no"), ""),
    "jacobian_approximation": (("exact",), "caspar's derivatives are exact (compiled)"),
    "gradient_approximation": (("exact",), "caspar's derivatives are exact (compiled)"),
    "findiff_perturbation": (_EVERY, ""),    # finite-difference derivatives only
    # read by resolve_options, which merges the file's options (solver/options_file.py)
    "option_file_name": (_EVERY, ""),
    "print_options_documentation": (("no",), "caspar's options are documented in "
                                             "caspar_backend.solver.options.OPTIONS"),
    "print_options_mode": (_EVERY, ""),
    # options of IPOPT's AMPL executable (Pyomo's 'ipopt' solver passes them): an
    # evaluation error is handled as IPOPT's library does; no .sol file is written
    "halt_on_ampl_error": (_EVERY, ""),
    "wantsol": (_EVERY, ""),
    "print_advanced_options": (_EVERY, ""),
    "print_info_string": (("no",), "caspar's iteration lines have no info-string column"),
    "print_frequency_time": ((0, 0.0), "caspar prints by iteration count "
                                       "(print_frequency_iter)"),
    "inf_pr_output": (("original",), "the inf_pr column shows the original problem's "
                                     "violation"),
    # a constant function evaluated at every point gives the values IPOPT keeps; where it
    # is not constant IPOPT's iterates differ (it keeps its first evaluation): said
    **{name: (("no",), f"caspar evaluates {what} at every iterate -- the same values "
                       "where it is constant; IPOPT keeps its first evaluation")
       for name, what in (("grad_f_constant", "the objective's gradient"),
                          ("jac_c_constant", "the equality constraints' Jacobian"),
                          ("jac_d_constant", "the inequality constraints' Jacobian"),
                          ("hessian_constant", "the Hessian"))},
    # a compiled problem keeps its structure between solves anyway
    "warm_start_same_structure": (("yes", "no"), ""),
    "skip_finalize_solution_call": (("yes", "no"), ""),      # a TNLP callback
    "point_perturbation_radius": ((10, 10.0), "caspar's derivative test checks at the "
                                              "starting point"),
    "derivative_test_first_index": ((-2,), "caspar's derivative test checks every "
                                           "component"),
    # the limited-memory Hessian spans every variable (equal while
    # num_linear_variables = 0); the augmented-system solver of the update is linear
    # algebra only
    "num_linear_variables": ((0,), "caspar's limited-memory Hessian spans every "
                                   "variable"),
    "hessian_approximation_space": (("nonlinear-variables", "all-variables"), ""),
    "limited_memory_aug_solver": (("sherman-morrison", "extended"), ""),
    # options of IPOPT algorithms caspar does not run (IPOPT_ONE_VALUE below): no effect
    "dependency_detection_with_rhs": (_EVERY, ""),
    "skip_corr_if_neg_curv": (_EVERY, ""),
    "skip_corr_in_monotone_mode": (_EVERY, ""),
    "corrector_compl_avrg_red_fact": (_EVERY, ""),
    "nu_init": (_EVERY, ""),                       # line_search_method penalty
    "nu_inc": (_EVERY, ""),
    "rho": (_EVERY, ""),
    "alpha_for_y_tol": (_EVERY, ""),               # alpha_for_y *-and-full

}

_ONE_ALGORITHM = "caspar implements IPOPT's default here"
_ADAPTIVE = "IPOPT's default of caspar's mu_strategy 'adaptive'"
_LBFGS = "caspar's limited-memory Hessian is IPOPT's default BFGS with scalar1 start"

IPOPT_ONE_VALUE = {
    "line_search_method": (("filter",), "the filter line search"),
    "corrector_type": (("none",), "no corrector steps"),
    "soc_method": ((0,), "IPOPT's default second-order corrections"),
    "mehrotra_algorithm": (("no",), _ONE_ALGORITHM),
    "fast_step_computation": (("no",), _ONE_ALGORITHM),
    "dependency_detector": (("none",), "no dependency detection"),
    "least_square_init_primal": (("no",), "the user's starting point, pushed"),
    "warm_start_entire_iterate": (("no",), "warm starts from x0, lam_g0, lam_x0"),
    "warm_start_target_mu": ((0, 0.0), _ONE_ALGORITHM),
    "replace_bounds": (("no",), _ONE_ALGORITHM),
    "accept_every_trial_step": (("no",), "the filter decides every step"),
    "accept_after_max_steps": ((-1,), "the filter decides every step"),
    "alpha_for_y": (("primal",), "the constraint multipliers take the primal step"),
    "mu_target": ((0, 0.0), "complementarity driven to zero"),
    "s_max": ((100, 100.0), "IPOPT's default scaling of the optimality error"),
    "nlp_scaling_obj_target_gradient": ((0, 0.0), "gradient-based scaling by "
                                                  "nlp_scaling_max_gradient"),
    "nlp_scaling_constr_target_gradient": ((0, 0.0), "gradient-based scaling by "
                                                     "nlp_scaling_max_gradient"),
    "alpha_min_frac": ((0.05,), "IPOPT's default line-search constants"),
    "gamma_theta": ((1e-5,), "IPOPT's default line-search constants"),
    "gamma_phi": ((1e-8,), "IPOPT's default line-search constants"),
    "delta": ((1, 1.0), "IPOPT's default line-search constants"),
    "s_theta": ((1.1,), "IPOPT's default line-search constants"),
    "s_phi": ((2.3,), "IPOPT's default line-search constants"),
    "eta_phi": ((1e-8,), "IPOPT's default line-search constants"),
    "min_refinement_steps": ((1,), "IPOPT's default iterative refinement"),
    "residual_ratio_singular": ((1e-5,), "IPOPT's default iterative refinement"),
    "residual_improvement_factor": ((1, 1.0), "IPOPT's default iterative refinement"),
    "neg_curv_test_tol": ((0, 0.0), "the inertia-free test of IPOPT's default"),
    "neg_curv_test_reg": (("yes",), "the inertia-free test of IPOPT's default"),
    "perturb_always_cd": (("no",), "delta_c only for a singular system"),
    "resto_proximity_weight": ((1, 1.0), "the restoration's proximity weight sqrt(mu)"),
    "resto_failure_feasibility_threshold": ((0, 0.0), _ONE_ALGORITHM),
    "fixed_mu_oracle": (("average_compl",), _ADAPTIVE),
    "adaptive_mu_kkterror_red_iters": ((4,), _ADAPTIVE),
    "adaptive_mu_kkterror_red_fact": ((0.9999,), _ADAPTIVE),
    "adaptive_mu_monotone_init_factor": ((0.8,), _ADAPTIVE),
    "adaptive_mu_kkt_norm_type": (("2-norm-squared",), _ADAPTIVE),
    "mu_max_fact": ((1000, 1000.0), _ADAPTIVE),
    "quality_function_norm_type": (("2-norm-squared",), _ADAPTIVE),
    "quality_function_centrality": (("none",), _ADAPTIVE),
    "quality_function_balancing_term": (("none",), _ADAPTIVE),
    "limited_memory_update_type": (("bfgs",), _LBFGS),
    "limited_memory_initialization": (("scalar1",), _LBFGS),
    "limited_memory_init_val": ((1, 1.0), _LBFGS),
    "limited_memory_init_val_max": ((1e8,), _LBFGS),
    "limited_memory_init_val_min": ((1e-8,), _LBFGS),
}


def _same(value, allowed) -> bool:
    """``value`` is one of ``allowed`` (numbers by value to 1e-5 relative, as IPOPT
    prints its defaults to six digits; True/False as 'yes'/'no')."""
    if isinstance(value, bool):
        value = "yes" if value else "no"
    for a in allowed:
        if isinstance(a, str):
            if isinstance(value, str) and value.lower() == a:
                return True
        elif not isinstance(value, str):
            try:
                if abs(float(value) - float(a)) <= 1e-5 * abs(float(a)):
                    return True
            except (TypeError, ValueError):
                pass
    return False


def no_effect_warning(name: str, value) -> str:
    """'' when ``value`` of the IPOPT_NO_EFFECT option ``name`` is accepted silently,
    else the warning's text."""
    silent, why = IPOPT_NO_EFFECT[name]
    if silent == _EVERY or _same(value, silent):
        return ""
    return f"option {name}={value!r} has no effect in caspar: {why}"


def one_value_error(name: str, value) -> str:
    """'' when ``value`` of the IPOPT_ONE_VALUE option ``name`` is the one caspar
    implements, else the error's text."""
    allowed, what = IPOPT_ONE_VALUE[name]
    if _same(value, allowed):
        return ""
    return (f"option {name}={value!r} is not implemented: {what} (accepted: "
            f"{', '.join(repr(a) for a in allowed)})")
