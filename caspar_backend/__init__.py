"""caspar: a compiler and GPU interior-point solver for nonlinear programs.

``import caspar_backend`` is cheap: it imports neither CUDA, pyomo nor casadi.
The public entry points are loaded on first use.
"""

from __future__ import annotations

__version__ = "0.1.0"

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

_LAZY = {
    "Graph": ("caspar_backend.expr", "Graph"),
    "NLPModel": ("caspar_backend.model", "NLPModel"),
    "Problem": ("caspar_backend.problem", "Problem"),
    "from_pyomo": ("caspar_backend.adapters.pyomo", "from_pyomo"),
    "from_casadi": ("caspar_backend.adapters.casadi", "from_casadi"),
    "check_derivatives": ("caspar_backend.derivative_check", "check_derivatives"),
}

__all__ = sorted(_LAZY) + ["CasparError", "ModelError", "__version__"]


def __getattr__(name):
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        value = getattr(importlib.import_module(mod), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'caspar_backend' has no attribute {name!r}")
