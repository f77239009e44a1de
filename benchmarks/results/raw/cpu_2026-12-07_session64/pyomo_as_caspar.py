"""pytest plugin: Pyomo's SolverFactory('ipopt') builds caspar's legacy solver instead."""
import pyomo.environ  # noqa: F401
from pyomo.opt.base import solvers as S
import caspar_backend.pyomo  # noqa: F401  (registers 'caspar')

_orig = S.SolverFactoryClass.__call__


def _call(self, _name=None, **kwds):
    if _name == "ipopt":
        _name = "caspar"
    return _orig(self, _name, **kwds)


S.SolverFactoryClass.__call__ = _call
