"""caspar: a compiler and GPU interior-point solver for nonlinear programs.

``import caspar_backend`` is cheap: it imports neither CUDA, pyomo nor casadi.
The public entry points are loaded on first use.
"""

from __future__ import annotations

from .version import __version__  # noqa: F401

from .errors import (  # noqa: F401  (cheap, dependency-free)
    CasparError,
    DeviceError,
    EvaluationError,
    IndexOutOfRangeError,
    ModelError,
    NonFiniteError,
    OptionError,
    UnsupportedOpError,
)

def _source_checkout_path() -> None:
    # In a source checkout (not installed), adapters/ and kernels/ sit beside this
    # package and are installed as caspar_backend.adapters / .kernels; let the
    # checkout import them the same way.
    import os

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    here = os.path.dirname(os.path.abspath(__file__))
    if (not os.path.isdir(os.path.join(here, "adapters"))
            and os.path.isfile(os.path.join(root, "pyproject.toml"))
            and os.path.isdir(os.path.join(root, "adapters"))
            and root not in __path__):
        __path__.append(root)


_source_checkout_path()


def _watch_pyomo() -> None:
    # SolverFactory('caspar') in Pyomo: registered now if Pyomo is loaded, else
    # right after `import pyomo.environ` (an import hook; Pyomo is not imported here)
    from . import _pyomo_hook

    _pyomo_hook.install()


_watch_pyomo()

from ._lazy import lazy_attributes  # noqa: E402

_LAZY = {
    "Graph": ("caspar_backend.expr", "Graph"),
    "NLPModel": ("caspar_backend.model", "NLPModel"),
    "Problem": ("caspar_backend.problem", "Problem"),
    "load_problem": ("caspar_backend.persist", "load_problem"),
    "from_pyomo": ("caspar_backend.adapters.pyomo", "from_pyomo"),
    "from_casadi": ("caspar_backend.adapters.casadi", "from_casadi"),
    "check_derivatives": ("caspar_backend.derivative_check", "check_derivatives"),
    "solve_nlp": ("caspar_backend.solver", "solve_nlp"),
    "SolverService": ("caspar_backend.batch.service", "SolverService"),
    "split_cores": ("caspar_backend.batch.placement", "split_cores"),
    "LeastSquaresProblem": ("caspar_backend.lsq.problem", "LeastSquaresProblem"),
}

__all__ = sorted(_LAZY) + ["CasparError", "ModelError", "__version__"]


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
