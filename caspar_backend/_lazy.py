"""Module attributes imported on first use (PEP 562 ``__getattr__`` / ``__dir__``).

``caspar_backend`` and ``caspar_backend.casadi`` name their public objects in a table
``{attribute: (module, name)}``; the object is imported the first time it is read and
then kept in the module's namespace, so importing the front module imports neither
the heavy internals nor Pyomo/CasADi.
"""

from __future__ import annotations

import importlib


def lazy_attributes(module_name: str, table: dict, namespace: dict):
    """``(__getattr__, __dir__)`` for the module ``module_name`` whose globals are
    ``namespace``, resolving the names of ``table`` on first access."""

    def __getattr__(name):
        if name in table:
            mod, attr = table[name]
            value = getattr(importlib.import_module(mod), attr)
            namespace[name] = value
            return value
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
