"""The ``caspar_v2`` spelling of caspar's legacy Pyomo solver.

Pyomo names the legacy wrapper of a contrib solver ``<name>_v2`` when the plain name is
taken by an older plugin (``SolverFactory('ipopt_v2')``), and its contrib test-suite
reaches every solver that way.  caspar's plain name already is the new interface;
``caspar_v2`` is the same legacy class, so that spelling works too.

Both the import hook (:mod:`caspar_backend._pyomo_hook`, deferred entries) and the
plugin (:mod:`caspar_backend.adapters.pyomo.plugin`, the real classes) register it; it
lives in this leaf so that neither imports the other for it.  Pyomo is imported only
when :func:`register_v2_alias` runs, i.e. once Pyomo is loaded.
"""

from __future__ import annotations

#: the factories' description of caspar
DOC = "caspar interior-point NLP solver (IPOPT's algorithm)"


def register_v2_alias(legacy_cls) -> None:
    """Register ``legacy_cls`` as ``LegacySolverFactory('caspar_v2')``."""
    from pyomo.opt.base.solvers import LegacySolverFactory

    LegacySolverFactory.register("caspar_v2", DOC + " (alias of 'caspar')")(legacy_cls)
