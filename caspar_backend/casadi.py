"""caspar for CasADi users: ``from caspar_backend.casadi import nlpsol, Opti``.

    S = nlpsol("S", "caspar", {"x": x, "p": p, "f": f, "g": g}, {"caspar": {"tol": 1e-8}})
    opti = Opti(); ...; opti.solver("caspar"); sol = opti.solve()
    prob = least_squares({"x": x, "p": p, "r": r}); summary = prob.solve(x0=x0)

``nlpsol`` has ``casadi.nlpsol``'s signature and passes every other solver name to
casadi unchanged; ``Opti`` is ``casadi.Opti`` with ``solver('caspar', ...)``; ``least_squares`` compiles a
residual expression into caspar's Levenberg-Marquardt problem (:mod:`caspar_backend.lsq`).  The
implementations live in ``caspar_backend.adapters.casadi.frontend`` / ``.opti``
(``load``/``deserialize``, and the reader that lets ``casadi.Function.load`` read saved
nlpsol Functions, installed when any of these is first used: ``.nlpsol_load``); this
module only forwards to them, on first use, so importing it costs nothing and
``import caspar_backend`` never imports casadi.
"""

from __future__ import annotations

from ._lazy import lazy_attributes

_LAZY = {
    "nlpsol": ("caspar_backend.adapters.casadi.nlpsol_load", "nlpsol"),
    "NlpsolFunction": ("caspar_backend.adapters.casadi.nlpsol_load", "NlpsolFunction"),
    "NlpsolFailure": ("caspar_backend.adapters.casadi.nlpsol_load", "NlpsolFailure"),
    "Opti": ("caspar_backend.adapters.casadi.opti", "Opti"),
    "OptiSol": ("caspar_backend.adapters.casadi.opti", "OptiSol"),
    "least_squares": ("caspar_backend.adapters.casadi.least_squares", "least_squares"),
    "load": ("caspar_backend.adapters.casadi.nlpsol_load", "load"),
    "deserialize": ("caspar_backend.adapters.casadi.nlpsol_load", "deserialize"),
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())
