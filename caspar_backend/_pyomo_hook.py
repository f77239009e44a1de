"""Make ``SolverFactory('caspar')`` work after ``import caspar_backend`` without
importing Pyomo.

Pyomo 6.10 finds solver plugins only among the packages ``pyomo.environ`` lists
itself (it reads entry points only for ``pyomo`` CLI subcommands, group
``pyomo.command``), so a third-party solver registers by running code.  This
module does that lazily:

* Pyomo already imported (``pyomo.environ`` fully initialised): register now;
* otherwise: a one-shot ``sys.meta_path`` finder waits for ``pyomo.environ`` and
  registers right after that module has executed (a post-import hook: the real
  loader runs unchanged, then :func:`_register`).

Registration itself imports nothing new: the factory entries are small callables
that import :mod:`caspar_backend.adapters.pyomo.plugin` on the first
``SolverFactory('caspar')``, and that module then registers its classes in place
of the callables.  A failure is reported as a warning and never breaks
``import pyomo.environ``.
"""

from __future__ import annotations

import sys

from ._pyomo_alias import DOC as _DOC
from ._pyomo_alias import register_v2_alias

_TARGET = "pyomo.environ"
_state = {"registered": False}


def _deferred(kind: str):
    """A factory entry that imports the solver classes on first use only (they
    import NumPy and caspar's compiler: too much for ``import pyomo.environ``).
    The plugin module then registers the classes themselves."""

    def make(**kwds):
        from caspar_backend.adapters.pyomo import plugin

        plugin.register()
        cls = plugin.CasparSolver if kind == "contrib" else plugin.LegacyCasparSolver
        return cls(**kwds)

    make.__name__ = make.__qualname__ = f"caspar_{kind}_solver"
    make.__doc__ = f"{_DOC} ({kind} interface; built on first use)"
    return make


def _register() -> None:
    if _state["registered"]:
        return
    _state["registered"] = True        # first: a failing registration is not retried
    try:
        from pyomo.contrib.solver.common.factory import SolverFactory

        if "caspar" not in SolverFactory:
            # contrib's register also registers the legacy entry (legacy_name)
            SolverFactory.register("caspar", legacy_name="caspar", doc=_DOC)(
                _deferred("contrib"), _deferred("legacy"))
        register_v2_alias(_deferred("legacy"))
    except Exception as exc:           # never break the user's import of Pyomo
        import warnings

        warnings.warn(f"caspar could not register SolverFactory('caspar') with Pyomo: "
                      f"{type(exc).__name__}: {exc}", RuntimeWarning, stacklevel=2)


class _RegisterAfterExec:
    """Final.  Loader wrapper: the original loader executes the module, then caspar
    registers.  Any other attribute is the original loader's."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        self._loader.exec_module(module)
        _register()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _PyomoEnvironFinder:
    """Final.  One-shot meta path finder for ``pyomo.environ``: removes itself, finds the
    real spec with the remaining finders, wraps its loader."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _TARGET:
            return None
        _uninstall()
        import importlib.util

        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisterAfterExec(spec.loader)
        return spec


def _uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PyomoEnvironFinder)]


def install() -> None:
    """Register now if Pyomo is loaded, else when ``pyomo.environ`` is imported."""
    mod = sys.modules.get(_TARGET)
    if mod is not None:
        spec = getattr(mod, "__spec__", None)
        if not getattr(spec, "_initializing", False):
            _register()
        return                          # mid-import of pyomo.environ: nothing safe to do
    if not any(isinstance(f, _PyomoEnvironFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PyomoEnvironFinder())
