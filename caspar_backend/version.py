"""caspar's version, ``MAJOR.MINOR.PATCH`` (the same string as pyproject.toml's).

A module of its own, importing nothing, so that the modules that report or hash the
version (the CUDA compile cache key, the Pyomo plugin's solver name) depend on this leaf
rather than on the package ``__init__`` (which installs the Pyomo import hook).
"""

__version__ = "0.1.0"
