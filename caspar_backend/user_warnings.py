"""Warnings about what the user asked for, attributed to the user's own line.

``warnings.warn(msg, stacklevel=k)`` names a fixed frame above the call, but caspar's
option checks run at several depths (a Pyomo or CasADi front-end validates the options,
the solve resolves them again), so a fixed level points into caspar or the framework,
and the same warning printed from two places shows twice.  :func:`warn` walks up to the
first frame outside caspar, Pyomo and CasADi -- the script line that called the solver
-- and warns there: Python's default filter then shows one warning per message and
script line, however many times the solve's layers repeat it.
"""

from __future__ import annotations

import os
import sys
import warnings

_OWN = os.path.dirname(os.path.abspath(__file__))


def _package_dirs() -> tuple:
    """The directories whose frames are not the user's: caspar's (the package and its
    front-ends), and Pyomo's and CasADi's where they are imported."""
    dirs = [_OWN + os.sep, os.path.join(os.path.dirname(_OWN), "adapters") + os.sep]
    for name in ("pyomo", "casadi"):
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


def warn(message: str, category=UserWarning, repeat: bool = False) -> None:
    """``warnings.warn(message, category)`` at the first frame outside caspar, Pyomo and
    CasADi (importlib's frames skipped too); at the outermost frame where every frame is
    theirs.  ``repeat``: shown at every call, not once per message and line (what the
    event reports happens again each time, as casadi warns of each failed evaluation;
    the caller decides how often), unless the user's filters say otherwise."""
    skip = _package_dirs()
    frame, level = sys._getframe(0), 1
    while frame.f_back is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(skip) or name.startswith("<frozen")):
            break
        frame, level = frame.f_back, level + 1
    if not repeat:
        warnings.warn(message, category, stacklevel=level)
        return
    # a registry of its own: the default filter's once-per-line memory is not consulted
    g = frame.f_globals
    warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                           module=g.get("__name__"), registry={}, module_globals=g)
