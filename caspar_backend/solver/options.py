"""Validating the solver's options against their table (:mod:`.option_table`: IPOPT's
names, defaults and meanings).

Every option is one :class:`~.option_table.Option` row of :data:`OPTIONS` (name, type,
default, allowed values or range, documentation).  :func:`resolve_options` validates a
user dict against the table and returns a complete, read-only :class:`Options` mapping:

* an unknown name raises :class:`~caspar_backend.errors.OptionError` listing the closest
  valid names (``difflib``), so ``tol_acceptable`` suggests ``acceptable_tol``; IPOPT's
  options of its linear solvers (``hsllib``, ``ma27_pivtol``, ``mumps_mem_percent``,
  ``linear_system_scaling``, ...) are accepted, ignored and warned about
  (:func:`ignored_ipopt_option`), as are the IPOPT options of
  :data:`~.ipopt_options.IPOPT_NO_EFFECT` (silently where the value is caspar's behaviour
  anyway); an IPOPT option of :data:`~.ipopt_options.IPOPT_ONE_VALUE` (an algorithm or
  constant of which caspar implements IPOPT's default) raises OptionError for another
  value;
* a value of the wrong type, outside its range, or not among the allowed strings raises
  :class:`OptionError` naming the option and what it accepts.

caspar-only options (``device``, ``stream``, ``max_wall_time`` semantics as IPOPT) are in
the same table; there is no second place where options live.
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Mapping

import numpy as np

from ..errors import OptionError
from ..user_warnings import warn
from .linear_solver_names import IPOPT_LINEAR_SOLVER_OPTION_PREFIXES, IPOPT_LINEAR_SOLVER_OPTIONS
from .options_file import DEFAULT_NAME, file_key, file_options
from .ipopt_options import (IPOPT_NO_EFFECT, IPOPT_ONE_VALUE, no_effect_warning,
                            one_value_error)
from .option_table import OPTIONS, Option

_INF = math.inf


def ignored_ipopt_option(name: str) -> bool:
    """An option of IPOPT's linear solvers (accepted and ignored, with a warning)."""
    return name in IPOPT_LINEAR_SOLVER_OPTIONS or (
        name.startswith(IPOPT_LINEAR_SOLVER_OPTION_PREFIXES) and name not in OPTIONS)




def _number_text(opt: Option, text: str):
    """A numeric option's value written as text (Pyomo's ``solver.options['max_iter'] =
    '3'``: IPOPT reads its command line and options file as text): an integer option
    takes an integer's digits, a real one any number Python reads (``'1e-6'``,
    ``'inf'``)."""
    t = text.strip()
    try:
        return int(t) if opt.type is int else float(t)
    except ValueError:
        kind = "an int" if opt.type is int else "a number"
        raise OptionError(f"option {opt.name!r} expects {kind}, got {text!r}") from None


def _check_value(opt: Option, value):
    if opt.type is object:
        return value
    if opt.type is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("yes", "no"):
            return value.lower() == "yes"       # IPOPT spells booleans yes/no
        raise OptionError(f"option {opt.name!r} expects a bool (or 'yes'/'no'), "
                          f"got {value!r}")
    if opt.type is str:
        if not isinstance(value, str):
            raise OptionError(f"option {opt.name!r} expects a string, got {value!r}")
        if opt.choices and value not in opt.choices:
            raise OptionError(f"option {opt.name!r} must be one of {list(opt.choices)}, "
                              f"got {value!r}")
        return value
    if isinstance(value, str) and opt.type in (int, float):
        value = _number_text(opt, value)
    if opt.type is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not ok and isinstance(value, float) and value.is_integer():
            value, ok = int(value), True
        if not ok:
            raise OptionError(f"option {opt.name!r} expects an int, got {value!r}")
    elif opt.type is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            try:
                import numpy as np

                if isinstance(value, np.generic) and np.isrealobj(value):
                    value = float(value)
                else:
                    raise TypeError
            except TypeError:
                raise OptionError(f"option {opt.name!r} expects a number, got {value!r}")
        value = float(value)
    if not opt.admits(value):
        raise OptionError(f"option {opt.name!r} must satisfy {opt.range_text()} (IPOPT's "
                          f"range), got {value!r}")
    return value


def unknown_option_message(name: str) -> str:
    close = difflib.get_close_matches(name, list(OPTIONS), n=5, cutoff=0.5)
    # difflib misses reordered words (tol_acceptable vs acceptable_tol): add token matches
    words = set(name.lower().split("_"))
    for cand in OPTIONS:
        if cand not in close and len(close) < 5 and words and words == set(cand.split("_")):
            close.append(cand)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown solver option {name!r}{hint}"


def infinite_bounds(lo_inf: float, hi_inf: float, lbx, ubx, lbg, ubg) -> list:
    """IPOPT's nlp_lower_bound_inf / nlp_upper_bound_inf: ``[lbx, ubx, lbg, ubg]`` with
    every lower bound <= ``lo_inf`` made -inf and every upper bound >= ``hi_inf`` made
    +inf (new arrays where something changes; the inputs are never written)."""
    out = []
    for k, b in enumerate((lbx, ubx, lbg, ubg)):
        b = np.asarray(b, dtype=float)
        far = (b <= lo_inf) if k % 2 == 0 else (b >= hi_inf)
        if np.any(far & np.isfinite(b)):
            b = np.where(far, -np.inf if k % 2 == 0 else np.inf, b)
        out.append(b)
    return out


def bound_infinities(user: Mapping[str, Any] | None) -> tuple:
    """``(nlp_lower_bound_inf, nlp_upper_bound_inf)`` of the user's options (the
    defaults where not given; checked by resolve_options)."""
    user = user or {}
    out = []
    for name in ("nlp_lower_bound_inf", "nlp_upper_bound_inf"):
        try:
            out.append(float(user.get(name, OPTIONS[name].default)))
        except (TypeError, ValueError):     # resolve_options names the bad value
            out.append(OPTIONS[name].default)
    return tuple(out)


def _with_options_file(user: Mapping[str, Any] | None) -> dict:
    """``user`` with IPOPT's options file under it (:mod:`.options_file`: the file
    ``option_file_name`` names, default ipopt.opt in the working directory): the file
    sets the options the caller did not; where both set one the caller's stays, with
    IPOPT's warning; ``option_file_name`` itself removed."""
    merged = dict(user or {})
    name = merged.pop("option_file_name", DEFAULT_NAME)
    if not isinstance(name, str):
        raise OptionError(f"option 'option_file_name' expects a file name (a string), "
                          f"got {name!r}")
    for key, text in file_options(name).items():
        if key not in merged:
            merged[key] = text
        elif str(merged[key]) != text:
            warn(f"options file {name}: option {key} {text} is not taken, the solve's "
                 f"{key}={merged[key]!r} stays (IPOPT: the option is set to disallow "
                 f"clobbering)")
    return merged


def resolve_options(user: Mapping[str, Any] | None) -> "Options":
    """Validate ``user`` -- with IPOPT's options file (ipopt.opt) under it -- against
    :data:`OPTIONS`; return the complete option mapping."""
    values = {name: opt.default for name, opt in OPTIONS.items()}
    given = {}
    for name, value in _with_options_file(user).items():
        opt = OPTIONS.get(name)
        shown = value.item() if isinstance(value, np.generic) else value
        if opt is None and name in IPOPT_NO_EFFECT:
            why = no_effect_warning(name, shown)
            if why:
                warn(why)
            continue
        if opt is None and name in IPOPT_ONE_VALUE:
            why = one_value_error(name, shown)
            if why:
                raise OptionError(why)
            continue
        if opt is None and ignored_ipopt_option(name):
            warn(f"option {name}={shown!r} is one of IPOPT's linear solver options: "
                 "caspar factorizes with its own solver (option linear_solver) and "
                 "ignores it")
            continue
        if opt is None:
            raise OptionError(unknown_option_message(name))
        values[name] = given[name] = _check_value(opt, value)
    # IPOPT's DefaultIterateInitializer: the slacks' push and fraction are bound_push's
    # and bound_frac's unless given
    for name, source in (("slack_bound_push", "bound_push"), ("slack_bound_frac", "bound_frac")):
        if name not in given:
            values[name] = values[source]
    if values["hessian_approximation"] == "limited-memory":
        # IPOPT's defaults for a quasi-Newton Hessian (AlgorithmBuilder, IpoptAlgorithm)
        for name, value in (("mu_strategy", "adaptive"), ("recalc_y", True)):
            if name not in given:
                values[name] = value
    return Options(values, given)


#: resolve_options' answers by the items given: (name, type, value) in the given order
_resolved: dict = {}


def resolved_options(user: Mapping[str, Any] | None) -> "Options":
    """:func:`resolve_options` of ``user``, the same object again for the same items
    (names, value types and values, in the same order) -- a batched solve resolves its
    options several times per call.  Memoized only where resolving warns of nothing
    (every name in :data:`OPTIONS`) and every value is a hashable str, bool, int or
    float; at most 256 entries.  The Options answered is shared: never write it (nor its
    ``user``)."""
    items = tuple((k, type(v), v) for k, v in (user or {}).items())
    # (an options file read with them: its identity is part of the key)
    items += (file_key((user or {}).get("option_file_name", DEFAULT_NAME)),)
    try:
        hit = _resolved.get(items)
    except TypeError:                   # an unhashable value
        return resolve_options(user)
    if hit is not None:
        return hit
    opts = resolve_options(user)
    if len(_resolved) < 256 and items[-1] is None and all(
            k in OPTIONS and t in (str, bool, int, float) for k, t, _ in items[:-1]):
        _resolved[items] = opts
    return opts


class Options(Mapping):
    """Read-only validated options; attribute access ``opts.tol`` and mapping access."""

    def __init__(self, values: dict, user: dict):
        self._values = values
        self.user = dict(user)
        # attribute reads are plain instance lookups (an iteration reads ~100 options);
        # __getattr__ below is only reached for names that are not options
        self.__dict__.update(values)

    def __getitem__(self, key):
        return self._values[key]

    def __getattr__(self, key):
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(key) from None

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

