"""The top-level options of ``nlpsol(..., 'caspar', ...)`` (casadi's ``Nlpsol`` options).

:data:`OPTIONS` is the table (name, accepted type, default, meaning); an unknown name
raises as casadi does ("Unknown option: ..." with close matches).  Solver options go
under ``'caspar'`` with IPOPT's names and are checked against
:mod:`caspar_backend.solver.options` when the Function is built.

A script written for IPOPT runs with ``'caspar'`` as the plugin name and nothing else
changed: its ``'ipopt'`` option dict and ``'ipopt.name'`` keys are caspar's solver options
(IPOPT's names; ``'caspar'`` ones win where both set a name), and the options casadi
gives every Function or every ipopt nlpsol that govern how casadi itself evaluates,
differentiates, compiles or records the problem's functions (:data:`IGNORED`: ``jit``,
``compiler``, ``verbose``, ...) are accepted and ignored with one warning naming them --
caspar generates its own code, and none of them changes the answer.  Kept from
``common_options`` / ``specific_options``: casadi's records of the oracle Functions'
calls (``final_options`` ``dump_in``, ``dump_out``, ...; :mod:`.oracle_dumps`); and at
the top level the solver Function's own records (:data:`FUNCTION_RECORDS`: options of
the Function the user calls, whose calls then go through casadi's evaluation).

casadi's rules carried over: ``calc_multipliers`` switches ``calc_lam_x`` and
``calc_lam_p`` on (casadi's deprecated shorthand); ``no_nlp_grad`` contradicts
``calc_lam_p`` (when p is not empty), ``calc_lam_x``, ``calc_f`` and ``calc_g`` (when g
is not empty) and raises with casadi's message when combined with one of them
(:func:`check_consistency`, once the problem's sizes are known).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, final

import numpy as np

import casadi as ca

from caspar_backend.errors import OptionError
from caspar_backend.solver.options import resolve_options
from caspar_backend.user_warnings import warn

from .oracle_dumps import split_dump_options


@final
class NlpsolOptionError(OptionError, RuntimeError):
    """An unknown or ill-typed ``nlpsol`` option (final).  A RuntimeError as casadi's
    option errors are, and a :class:`~caspar_backend.errors.CasparError`."""


@final
@dataclass(frozen=True)
class FrontOption:
    """One top-level option: name, accepted Python type(s), default, meaning."""

    name: str
    type: Any
    default: Any
    doc: str


_ROWS = [
    *(FrontOption(name, typ, None, f"casadi's record of the solver Function's calls "
                  f"(a Function option: {doc}), written as for ipopt")
      for name, typ, doc in (
          ("dump_in", bool, "each call's inputs to {name}.{call:06d}.in.{input}.mtx"),
          ("dump_out", bool, "each call's outputs, .out."),
          ("dump", bool, "the Function itself, on its first call"),
          ("dump_dir", str, "the records' folder"),
          ("dump_format", str, "the records' format ('mtx' or 'txt')"))),
    FrontOption("caspar", dict, None, "Options of caspar's interior-point solver, IPOPT's "
                "names (caspar_backend.solver.options.OPTIONS), plus 'warm_start_init_point' "
                "('yes' uses lam_x0/lam_g0 as IPOPT does) and 'sb' (accepted, no banner)."),
    FrontOption("error_on_fail", bool, False, "Raise when the solve does not succeed "
                "(casadi's Nlpsol default is False)."),
    FrontOption("print_time", bool, True, "Print a timing table after every solve."),
    FrontOption("expand", bool, False, "Accepted for compatibility: caspar always lowers MX "
                "to SX instruction programs (Function.map and calls are kept as structure)."),
    FrontOption("calc_lam_p", bool, True, "Compute lam_p = -grad_p(f + lam_g^T g) "
                "(NaN when off, as casadi)."),
    FrontOption("calc_lam_x", bool, False, "Recompute lam_x = -grad_x(f + lam_g^T g) "
                "instead of returning the solver's bound multipliers."),
    FrontOption("calc_f", bool, False, "Accepted: f is always evaluated at the returned x."),
    FrontOption("calc_g", bool, False, "Accepted: g is always evaluated at the returned x."),
    FrontOption("calc_multipliers", bool, False, "casadi's deprecated shorthand: "
                "calc_lam_x and calc_lam_p both on."),
    FrontOption("no_nlp_grad", bool, False, "casadi's: build no Lagrangian-gradient "
                "Function; raises (as casadi) with calc_lam_p (p not empty), calc_lam_x, "
                "calc_f or calc_g (g not empty)."),
    FrontOption("bound_consistency", bool, False, "Clip x and g into their bounds and "
                "zero multipliers of the wrong sign (casadi's rule)."),
    FrontOption("min_lam", float, 0.0, "Multipliers with |lam| <= min_lam count as "
                "inactive when differentiating the solution."),
    FrontOption("equality", list, None, "Accepted (Opti passes it): caspar reads equality "
                "from lbg == ubg."),
    FrontOption("iteration_callback", ca.Function, None, "A casadi Function (e.g. a "
                "casadi.Callback) with nlpsol's outputs x, f, g, lam_x, lam_g, lam_p as "
                "inputs and one scalar output, called at every iterate as IPOPT's "
                "intermediate callback (lam_p: zeros); non-zero stops the solve with "
                "User_Requested_Stop (nlpsol_iteration)."),
    FrontOption("iteration_callback_step", int, 1, "Call iteration_callback only at "
                "iterations k with k % step == 0."),
    FrontOption("iteration_callback_ignore_errors", bool, False, "An exception in "
                "iteration_callback is a warning and the solve goes on (default: a "
                "warning and User_Requested_Stop, as casadi)."),
    FrontOption("detect_simple_bounds", bool, False, "Constraints a(p) x_j + b(p) "
                "(linear in one variable) become bounds on x_j, by casadi's rule; lam_x, "
                "lam_g and g are returned for the original constraints (simple_bounds)."),
    FrontOption("grad_f", ca.Function, None, "IPOPT's user gradient (x, p) -> (f, "
                "grad_f). caspar solves with its own exact derivatives of f: the Function "
                "is compared with them once, at the first solve's x0, and a warning says "
                "when they differ (nlpsol_derivatives)."),
    FrontOption("jac_g", ca.Function, None, "IPOPT's user Jacobian (x, p) -> (g, jac_g), "
                "ng x nx. Compared with caspar's exact Jacobian once, as grad_f."),
    FrontOption("hess_lag", ca.Function, None, "IPOPT's user Hessian (x, p, lam_f, lam_g) "
                "-> upper triangle of the Lagrangian Hessian. caspar iterates with it as "
                "IPOPT does (a Gauss-Newton Hessian takes IPOPT's steps), evaluated on "
                "the host; with opaque chains f, g and their derivatives then come from "
                "casadi's own functions with the jit options given (nlp_evaluator)."),
    FrontOption("discrete", list, None, "Integer markers per variable; caspar solves "
                "continuous NLPs: any True raises ModelError naming the variable."),
    FrontOption("client", object, None, "A dask.distributed.Client: calls with B columns "
                "and S.map(B) solve their instances in chunks on its workers, each with "
                "the device option resolved there ('auto': the worker's GPU, else its "
                "CPU); single solves stay here (caspar_backend.batch.distributed)."),
]

#: the top-level option table
OPTIONS = {o.name: o for o in _ROWS}
#: the options of the solver Function itself (casadi's records of its calls)
FUNCTION_RECORDS = ("dump_in", "dump_out", "dump", "dump_dir", "dump_format")

#: casadi's JIT options of the problem's functions: ignored by caspar's generated code;
#: applied where casadi's own functions evaluate the problem (.nlp_evaluator)
JIT_OPTIONS = ("jit", "jit_cleanup", "jit_serialize", "jit_name", "jit_temp_suffix",
               "compiler", "jit_options")

#: casadi options accepted and ignored (with a warning naming them): what each governs
IGNORED = {
    **dict.fromkeys(JIT_OPTIONS, "casadi's JIT compilation of the problem's functions"),
    **dict.fromkeys((
        "ad_weight", "ad_weight_sp", "max_num_dir", "enable_forward", "enable_reverse",
        "enable_jacobian", "enable_fd", "fd_options", "fd_method", "forward_options",
        "reverse_options", "jacobian_options", "der_options", "custom_jacobian",
        "jac_penalty", "is_diff_in", "is_diff_out", "derivative_of", "always_inline",
        "never_inline", "post_expand", "post_expand_options", "postpone_expand",
        "external_transform", "cache", "oracle_options", "common_options",
        "specific_options"), "casadi's evaluation and differentiation of the problem's "
                             "functions"),
    **dict.fromkeys((
        "verbose", "verbose_init", "record_time", "regularity_check", "user_data",
        "gather_stats", "inputs_check", "print_in", "print_out", "print_canonical",
        "max_io", "monitor",
        "show_eval_warnings", "ignore_check_vec", "warn_initial_bounds"),
        "casadi's diagnostics and records"),
    **dict.fromkeys((
        "pass_nonlinear_variables", "nonlinear_variables", "var_string_md",
        "var_integer_md", "var_numeric_md", "con_string_md", "con_integer_md",
        "con_numeric_md", "clip_inactive_lam", "inactive_lam_strategy",
        "inactive_lam_value", "sens_linsol", "sens_linsol_options", "convexify_strategy",
        "convexify_margin", "max_iter_eig"),
        "casadi's ipopt interface (metadata, sensitivity settings, Hessian convexification)"),
    # a NaN or Inf from an evaluation is handled as IPOPT's library does (a rejected trial
    # point, Invalid_Number_Detected where nothing else is left), not as an exception
    "eval_errors_fatal": "casadi's handling of evaluation errors",
    **dict.fromkeys(("detect_simple_bounds_is_simple", "detect_simple_bounds_parts"),
                    "casadi's choice of the simple bounds (caspar detects them itself "
                    "with detect_simple_bounds)"),
}


def split_options(opts) -> tuple[dict, dict]:
    """``(front, solver)``: the validated top-level options (every name of
    :data:`OPTIONS`, defaults filled) and the ``'caspar'`` solver options (including
    dotted ``'caspar.name'`` keys)."""
    if not isinstance(opts, dict):
        raise NlpsolOptionError(f"nlpsol options must be a dict, got {type(opts).__name__}")
    front = {k: o.default for k, o in OPTIONS.items()}
    solver, ipopt, ignored, oracle = {}, {}, [], {}
    for key, value in opts.items():
        if not isinstance(key, str):
            raise NlpsolOptionError(f"option names must be strings, got {key!r}")
        if key.startswith("caspar."):
            solver[key[len("caspar."):]] = value
            continue
        if key == "ipopt":
            if not isinstance(value, dict):
                raise NlpsolOptionError(f"option 'ipopt' must be a dict of IPOPT options, "
                                        f"got {type(value).__name__}")
            ipopt.update(value)
            continue
        if key.startswith("ipopt."):
            ipopt[key[len("ipopt."):]] = value
            continue
        if key in ("common_options", "specific_options"):
            # casadi's records of the oracle Functions' calls are kept (.oracle_dumps)
            oracle[key] = value
            continue
        if key in IGNORED:
            ignored.append(key)
            continue
        opt = OPTIONS.get(key)
        if opt is None:
            raise NlpsolOptionError(_unknown(key))
        front[key] = _typed(opt, value)
    solver = {**ipopt, **(front.pop("caspar") or {}), **solver}
    front["caspar"] = None
    try:
        front["oracle_records"], other = split_dump_options(oracle.get("common_options"),
                                                            oracle.get("specific_options"))
    except ValueError as exc:
        raise NlpsolOptionError(str(exc)) from None
    if other:
        ignored += sorted(oracle)
    if ignored:
        reasons = sorted({IGNORED[k] for k in ignored})
        warn(f"nlpsol(..., 'caspar', ...) ignores the options {', '.join(ignored)} "
             f"({'; '.join(reasons)}): caspar reads the problem into its own generated "
             "code, and the answer does not depend on them")
    #: the solver Function's own options (its records: casadi's evaluation writes them)
    front["function_records"] = {k: front[k] for k in FUNCTION_RECORDS
                                 if front[k] is not None}
    if front["calc_multipliers"]:
        front["calc_lam_x"] = front["calc_lam_p"] = True
    if front["iteration_callback_step"] < 1:
        raise NlpsolOptionError("option 'iteration_callback_step' must be at least 1, got "
                                f"{front['iteration_callback_step']}")
    return front, solver


def check_consistency(front: dict, n_p: int, n_g: int) -> None:
    """casadi's ``no_nlp_grad`` rule (``Nlpsol::init``): with ``n_p`` parameters and
    ``n_g`` constraints, the quantities that would need the gradient Function may not be
    asked for (``calc_lam_p`` counts only with parameters, ``calc_g`` only with
    constraints, as casadi switches them off otherwise)."""
    if not front["no_nlp_grad"]:
        return
    asked = {"calc_lam_p": front["calc_lam_p"] and n_p > 0, "calc_lam_x": front["calc_lam_x"],
             "calc_f": front["calc_f"], "calc_g": front["calc_g"] and n_g > 0}
    for name, on in asked.items():
        if on:
            raise NlpsolOptionError(f"Options 'no_nlp_grad' and '{name}' inconsistent")


def validate_options(opts) -> tuple[dict, dict, bool]:
    """``(front, solver, warm_start)``: :func:`split_options`, then the solver options
    checked against caspar's option table (an unknown or ill-typed one raises now, not
    at the first solve) with the front end's own ``warm_start_init_point`` and ``sb``
    taken out."""
    front, solver = split_options(opts)
    warm = _yes(solver.pop("warm_start_init_point", "no"), "warm_start_init_point")
    # the solver's table has IPOPT's warm_start_init_point (multipliers used only when
    # it is on) and sb; the front end also keeps the flag to pass lam_x0/lam_g0
    solver["warm_start_init_point"] = warm
    resolve_options(solver)
    return front, solver, warm


def _unknown(key) -> str:
    close = difflib.get_close_matches(key, list(OPTIONS), n=5, cutoff=0.4)
    lines = [f"Unknown option: {key}"]
    if close:
        lines.append("\nDid you mean one of the following?")
        lines += [f'> "{c}"  {OPTIONS[c].doc}' for c in close]
    lines.append(f"Options of nlpsol(..., 'caspar', ...): {', '.join(sorted(OPTIONS))}")
    return "\n".join(lines)


def _typed(opt: FrontOption, value):
    if opt.type is bool:
        # casadi accepts 0/1 for booleans
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))
                                                   and value in (0, 1)):
            return bool(value)
    elif opt.type is float:
        if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            return float(value)
    elif opt.type is int:
        if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
            return int(value)
    elif opt.type is list:
        if isinstance(value, (list, tuple, np.ndarray)):
            return list(value)
    elif isinstance(value, opt.type) or (opt.default is None and value is None):
        return value
    kind = "a casadi Function" if opt.type is ca.Function else opt.type.__name__
    raise NlpsolOptionError(f"option {opt.name!r} expects {kind}, got {value!r}")


def _yes(v, name) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("yes", "no"):
        return v.lower() == "yes"
    raise NlpsolOptionError(f"option {name!r} expects 'yes' or 'no', got {v!r}")
