"""casadi's dumps of the oracle Functions: ``dump_in`` / ``dump_out`` under
``common_options`` / ``specific_options``.

casadi's nlpsol evaluates its problem through Functions it makes from the oracle
(:mod:`.nlpsol_oracle`: ``nlp_f``, ``nlp_g``, ``nlp_grad_f``, ``nlp_jac_g``,
``nlp_hess_l``, ``nlp_grad``), each with the factory options
``common_options`` overridden entry by entry by ``specific_options[name]`` (one level:
a function's own ``final_options`` replace the common ones).
Their ``final_options`` are the made Function's own options, among them casadi's
records of every call: ``dump_in`` and ``dump_out`` write the call's inputs / outputs to
``{dump_dir}/{name}.{call:06d}.in.{input}.{dump_format}`` (and ``.out.``), ``dump``
the Function itself (casadi's Opti tests read them: ``test_linear_scale``).

caspar evaluates its compiled problem, not these Functions; where a user asks for such
records, :class:`OracleDumps` calls the dumping Functions (made by casadi, which writes
the files) at each evaluation the solve makes, as IPOPT's interface calls them:

=========================================  ===========================================
caspar's evaluation                        Function called (inputs)
=========================================  ===========================================
objective                                  ``nlp_f(x, p)``
constraints                                ``nlp_g(x, p)``
objective gradient                         ``nlp_grad_f(x, p)``
constraint Jacobian                        ``nlp_jac_g(x, p)``
Lagrangian Hessian (obj_factor, lambda)    ``nlp_hess_l(x, p, obj_factor, lambda)``
after the solve (the multipliers' pass)    ``nlp_grad(x, p, 1, lam_g)``
=========================================  ===========================================

so the k-th record of ``nlp_f`` is the point of caspar's k-th objective evaluation.
The solves take the general path (:class:`~caspar_backend.evaluators.observed.
ObservedEvaluator`); every other option of these dictionaries stays ignored (with the
front end's warning).
"""

from __future__ import annotations

from typing import final

import numpy as np

import casadi as ca

from .nlpsol_oracle import SIGNATURES, OracleFunctions

#: the Function options of casadi's call records (``final_options``)
DUMP_OPTIONS = ("dump_in", "dump_out", "dump", "dump_dir", "dump_format")
#: the options that switch a record on
_SWITCHES = ("dump_in", "dump_out", "dump")


def split_dump_options(common, specific) -> tuple[dict, bool]:
    """``(records, other)``: per oracle Function name, the ``final_options`` of casadi's
    records its factory options give (only names with a record switched on); ``other``:
    whether the two dictionaries hold anything else (ignored, warned by the caller).
    Raises ValueError naming the option where one is not a dictionary."""
    for label, d in (("common_options", common), ("specific_options", specific),
                     *((f"specific_options['{k}']", v) for k, v in (specific or {}).items()
                       if isinstance(specific, dict))):
        if d is not None and not isinstance(d, dict):
            raise ValueError(f"option {label} must be a dict, got {type(d).__name__}")
    common, specific = dict(common or {}), dict(specific or {})
    records, other = {}, False
    for name in sorted(set(SIGNATURES) | set(specific)):
        opts = _merged(common, specific.get(name) or {})
        final = opts.pop("final_options", None) or {}
        if not isinstance(final, dict):
            raise ValueError(f"the final_options of '{name}' must be a dict, got "
                             f"{type(final).__name__}")
        final = dict(final)
        dumps = {k: final.pop(k) for k in DUMP_OPTIONS if k in final}
        other = other or bool(opts) or bool(final)
        if name in SIGNATURES and any(dumps.get(k) for k in _SWITCHES):
            records[name] = dumps
    return records, other


def _merged(common: dict, specific: dict) -> dict:
    """casadi's ``combine(specific, common)``: specific's entries over common's, not
    recursively (a function's own ``final_options`` replace the common ones)."""
    return {**common, **specific}


@final
class OracleDumps:
    """The observer of :class:`~caspar_backend.evaluators.observed.ObservedEvaluator`
    that calls the dumping oracle Functions (module docstring), and :meth:`solution` for
    ``nlp_grad`` after a solve (final)."""

    def __init__(self, functions: OracleFunctions, names):
        self._functions = functions
        self.names = frozenset(names)

    @classmethod
    def of(cls, functions: OracleFunctions, records: dict) -> "OracleDumps | None":
        """The dumps of :func:`split_dump_options`'s ``records`` (None: none asked for)."""
        return cls(functions, records) if records else None

    def wrap(self, evaluator):
        """``evaluator`` (one solve's) reporting each evaluation here."""
        from caspar_backend.evaluators.observed import ObservedEvaluator

        return ObservedEvaluator(evaluator, self)

    def _call(self, name: str, *args) -> None:
        if name not in self.names:
            return
        fn = self._functions.get(name)
        fn.call([ca.DM(fn.sparsity_in(i), a) if hasattr(a, "__len__") else ca.DM(a)
                 for i, a in enumerate(args)])

    def obj(self, x, p) -> None:
        self._call("nlp_f", x, p)

    def cons(self, x, p) -> None:
        self._call("nlp_g", x, p)

    def grad(self, x, p) -> None:
        self._call("nlp_grad_f", x, p)

    def jac(self, x, p) -> None:
        self._call("nlp_jac_g", x, p)

    def hess(self, x, p, lam, obj_factor) -> None:
        self._call("nlp_hess_l", x, p, obj_factor, lam)

    def solution(self, front: dict, n_p: int, n_g: int, res, p) -> None:
        """casadi's nlpsol after its solve (``Nlpsol::eval``): ``nlp_grad`` at the
        solution ``res`` (a SolveResult of the oracle) with ``lam:f`` 1, where one of
        ``f``, ``g``, ``lam_x``, ``lam_p`` is computed from it -- the ``calc_*`` options
        of ``front`` (``calc_lam_p`` only with parameters, ``calc_g`` only with
        constraints)."""
        if (front["calc_f"] or front["calc_lam_x"] or (front["calc_g"] and n_g)
                or (front["calc_lam_p"] and n_p)):
            self._call("nlp_grad", np.asarray(res.x, float), np.asarray(p, float), 1.0,
                       np.asarray(res.lam_g, float))
