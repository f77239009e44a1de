"""The top-level options of ``nlpsol(..., 'caspar', ...)`` (casadi's ``Nlpsol`` options).

:data:`OPTIONS` is the table (name, accepted type, default, meaning); an unknown name
raises as casadi does ("Unknown option: ..." with close matches).  Solver options go
under ``'caspar'`` with IPOPT's names and are checked against
:mod:`caspar_backend.solver.options` when the Function is built.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any, final

import numpy as np

from caspar_backend.errors import OptionError
from caspar_backend.solver.options import resolve_options


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
    FrontOption("caspar", dict, None, "Options of caspar's interior-point solver, IPOPT's "
                "names (caspar_backend.solver.options.OPTIONS), plus 'warm_start_init_point' "
                "('yes' uses lam_x0/lam_g0 as IPOPT does) and 'sb' (accepted, no banner)."),
    FrontOption("error_on_fail", bool, False, "Raise when the solve does not succeed "
                "(casadi's Nlpsol default is False)."),
    FrontOption("print_time", bool, True, "Print a timing table after every solve."),
    FrontOption("expand", bool, False, "Accepted for compatibility: caspar always lowers MX "
                "to SX instruction programs (Function.map and calls are kept as structure)."),
    FrontOption("calc_lam_p", bool, True, "Compute lam_p = -grad_p(f + lam_g^T g)."),
    FrontOption("calc_lam_x", bool, False, "Recompute lam_x = -grad_x(f + lam_g^T g) "
                "instead of returning the solver's bound multipliers."),
    FrontOption("calc_f", bool, False, "Accepted: f is always evaluated at the returned x."),
    FrontOption("calc_g", bool, False, "Accepted: g is always evaluated at the returned x."),
    FrontOption("bound_consistency", bool, False, "Clip x and g into their bounds and "
                "zero multipliers of the wrong sign (casadi's rule)."),
    FrontOption("min_lam", float, 0.0, "Multipliers with |lam| <= min_lam count as "
                "inactive when differentiating the solution."),
    FrontOption("equality", list, None, "Accepted (Opti passes it): caspar reads equality "
                "from lbg == ubg."),
    FrontOption("discrete", list, None, "Integer markers per variable; caspar solves "
                "continuous NLPs: any True raises ModelError naming the variable."),
    FrontOption("client", object, None, "A dask.distributed.Client: calls with B columns "
                "and S.map(B) solve their instances in chunks on its workers, each with "
                "the device option resolved there ('auto': the worker's GPU, else its "
                "CPU); single solves stay here (caspar_backend.batch.distributed)."),
]

#: the top-level option table
OPTIONS = {o.name: o for o in _ROWS}


def split_options(opts) -> tuple[dict, dict]:
    """``(front, solver)``: the validated top-level options (every name of
    :data:`OPTIONS`, defaults filled) and the ``'caspar'`` solver options (including
    dotted ``'caspar.name'`` keys)."""
    if not isinstance(opts, dict):
        raise NlpsolOptionError(f"nlpsol options must be a dict, got {type(opts).__name__}")
    front = {k: o.default for k, o in OPTIONS.items()}
    solver = {}
    for key, value in opts.items():
        if not isinstance(key, str):
            raise NlpsolOptionError(f"option names must be strings, got {key!r}")
        if key.startswith("caspar."):
            solver[key[len("caspar."):]] = value
            continue
        opt = OPTIONS.get(key)
        if opt is None:
            raise NlpsolOptionError(_unknown(key))
        front[key] = _typed(opt, value)
    solver = {**(front.pop("caspar") or {}), **solver}
    front["caspar"] = None
    return front, solver


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
    if key == "ipopt" or key.startswith("ipopt."):
        lines.append("caspar's solver options go under 'caspar' (they use IPOPT's names), "
                     "e.g. {'caspar': {'tol': 1e-8, 'print_level': 0}}")
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
    elif opt.type is list:
        if isinstance(value, (list, tuple, np.ndarray)):
            return list(value)
    elif isinstance(value, opt.type):
        return value
    raise NlpsolOptionError(f"option {opt.name!r} expects {opt.type.__name__}, got "
                            f"{value!r}")


def _yes(v, name) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("yes", "no"):
        return v.lower() == "yes"
    raise NlpsolOptionError(f"option {name!r} expects 'yes' or 'no', got {v!r}")
