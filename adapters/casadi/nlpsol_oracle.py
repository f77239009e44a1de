"""The NLP's functions as casadi's IPOPT nlpsol names them: ``S.get_function(name)``.

casadi's IPOPT interface evaluates its problem (the *oracle*: ``(x, p) -> (f, g)``, the
nlp less its simple-bound rows under ``detect_simple_bounds``) through Functions it
creates from it, and a user reads them back with ``S.get_function(name)`` (casadi's
Opti tests check its derivatives against ``nlp_jac_g``, ``nlp_grad_f``, ``nlp_hess_l``).
caspar evaluates its compiled problem instead, so these are built on request, with
casadi's factory on the oracle and IPOPT's signatures
(``IpoptInterface::init``, ``Nlpsol::init``):

=============  ==========================  ==========================================
name           inputs                      outputs
=============  ==========================  ==========================================
nlp_f          x, p                        f
nlp_g          x, p                        g
nlp_grad_f     x, p                        f, grad_f_x
nlp_jac_g      x, p                        g, jac_g_x
nlp_hess_l     x, p, lam_f, lam_g          triu_hess_gamma_x_x
nlp_grad       x, p, lam_f, lam_g          f, g, grad_gamma_x, grad_gamma_p
=============  ==========================  ==========================================

(``gamma = lam_f f + lam_g^T g``; ``triu``: the upper triangle.)  Each is built once per
solver, on first request.
"""

from __future__ import annotations

from typing import final

import casadi as ca

from .nlp import _unpack

#: name -> (inputs, outputs) of casadi's factory, in IPOPT's order
SIGNATURES: dict[str, tuple[list[str], list[str]]] = {
    "nlp_f": (["x", "p"], ["f"]),
    "nlp_g": (["x", "p"], ["g"]),
    "nlp_grad": (["x", "p", "lam:f", "lam:g"], ["f", "g", "grad:gamma:x", "grad:gamma:p"]),
    "nlp_grad_f": (["x", "p"], ["f", "grad:f:x"]),
    "nlp_hess_l": (["x", "p", "lam:f", "lam:g"], ["triu:hess:gamma:x:x"]),
    "nlp_jac_g": (["x", "p"], ["g", "jac:g:x"]),
}


def nlp_function(nlp: dict, name: str = "nlp") -> ca.Function:
    """``Function(name, [x, p], [f, g])`` of an nlpsol dict, inputs ``x, p`` and outputs
    ``f, g`` so named (missing entries filled as the readers fill them): casadi's own
    evaluation of the user's expressions, MX kept MX."""
    x, f, g, p, _ = _unpack(nlp)
    return ca.Function(name, [x, p], [f, g], ["x", "p"], ["f", "g"])


@final
class OracleFunctions:
    """``get(name)``: the Function ``name`` of the module table for the oracle ``nlp``
    (an nlpsol dict), built on first request (final); ``final_options``: per name, the
    made Function's own options (casadi's factory option of that name: the records of
    :mod:`.oracle_dumps`)."""

    def __init__(self, nlp: dict, final_options: dict | None = None):
        self._nlp = nlp
        self._oracle = None
        self._built: dict[str, ca.Function] = {}
        self._final = dict(final_options or {})

    def names(self) -> list[str]:
        return sorted(SIGNATURES)

    def get(self, name: str) -> ca.Function:
        fn = self._built.get(name)
        if fn is not None:
            return fn
        if name not in SIGNATURES:
            raise RuntimeError(f"No such function '{name}': the caspar nlpsol has "
                               f"{', '.join(self.names())}")
        if self._oracle is None:
            self._oracle = nlp_function(self._nlp)
        ins, outs = SIGNATURES[name]
        opts = {"final_options": self._final[name]} if name in self._final else {}
        fn = self._built[name] = self._oracle.factory(name, ins, outs,
                                                      {"gamma": ["f", "g"]}, opts)
        return fn
