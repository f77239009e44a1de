"""SciPy imported for caspar without Pyomo's eager SciPy set-up.

Pyomo registers SciPy as a deferred dependency (``pyomo.common.dependencies``:
``attempt_import('scipy', callback=_finalize_scipy)``) and puts a finder at the front of
``sys.meta_path`` (``DeferredImportCallbackFinder``) so that the first ``import scipy``
anywhere in the process -- caspar's included -- runs that callback, which imports
``scipy.stats``, ``scipy.integrate`` and ``scipy.spatial`` too.  caspar needs none of
them, and they cost about half a second (the 2-core VM: ``import scipy.sparse`` 0.2 s
alone, 0.7 s in a process that has imported ``pyomo.environ``) -- more than a small
model's whole solve, paid by every script that solves once.

:func:`import_scipy` therefore imports the ``scipy`` package with that finder out of
the lookup, when it is there and SciPy is not imported yet.  Pyomo loses nothing: its
deferred ``scipy`` object stays unresolved until Pyomo itself uses it, and resolving it
then imports the (already loaded) package and runs the same callback.  The finder keys
its callbacks by top-level name only, so the submodules caspar imports afterwards
(``scipy.sparse``, ``scipy.linalg``) go through it untouched.  Where Pyomo has no such
finder (another version), nothing is changed.  While the package is being imported (once
per process, a fraction of a second) another thread's first import of another module
Pyomo defers skips its callback the same way, which Pyomo then runs when it uses it.
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()


def _pyomo_finders() -> list:
    """The ``sys.meta_path`` entries that run Pyomo's import callbacks for ``scipy``."""
    return [f for f in sys.meta_path
            if type(f).__name__ == "DeferredImportCallbackFinder"
            and type(f).__module__ == "pyomo.common.dependencies"
            and "scipy" in getattr(f, "_callbacks", ())]


def import_scipy() -> None:
    """Import ``scipy`` (the package) without Pyomo's callback (module docstring)."""
    if "scipy" in sys.modules:
        return
    with _lock:
        if "scipy" in sys.modules:
            return
        hidden = _pyomo_finders()
        if not hidden:
            return
        places = [sys.meta_path.index(f) for f in hidden]
        for f in hidden:
            sys.meta_path.remove(f)
        try:
            import scipy  # noqa: F401
        finally:
            for i, f in sorted(zip(places, hidden), key=lambda t: t[0]):
                sys.meta_path.insert(i, f)
