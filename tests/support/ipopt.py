"""The one way the tests run IPOPT: CasADi's ``nlpsol(..., 'ipopt', ...)`` on an nlp dict
(``x``, ``f``, optional ``g`` and ``p``) with the bounds and start in ``args``.

Every reference solve goes through :func:`solve`, so all of them share the quiet output
options and ``error_on_fail=False`` (a failed IPOPT solve is a status to compare, not an
exception)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class IpoptRun:
    """IPOPT's answer; ``stats`` is the solver's ``stats()`` (per-iteration logs)."""

    status: str
    success: bool
    iterations: int
    f: float
    x: np.ndarray
    g: np.ndarray
    lam_g: np.ndarray
    lam_x: np.ndarray
    t: float
    stats: dict


def ipopt_value(v):
    """IPOPT takes yes/no where caspar's options take booleans."""
    return ("yes" if v else "no") if isinstance(v, bool) else v


def solve(nlp, args=None, options=None, **nlpsol_options) -> IpoptRun:
    """Solve ``nlp`` with IPOPT.  ``options`` are IPOPT's own (booleans become yes/no);
    ``nlpsol_options`` go to ``casadi.nlpsol`` itself (``hess_lag``, ``expand``, ...)."""
    import casadi as cs

    opts = {"print_level": 0, "sb": "yes"}
    opts.update({k: ipopt_value(v) for k, v in (options or {}).items()})
    S = cs.nlpsol("ipopt", "ipopt", nlp, {"ipopt": opts, "print_time": False,
                                          "error_on_fail": False, **nlpsol_options})
    t0 = time.perf_counter()
    r = S(**(args or {}))
    t = time.perf_counter() - t0
    st = S.stats()

    def vec(v):
        return np.array(v, dtype=float).ravel()

    return IpoptRun(status=st["return_status"], success=bool(st["success"]),
                    iterations=int(st["iter_count"]), f=float(r["f"]), x=vec(r["x"]),
                    g=vec(r["g"]), lam_g=vec(r["lam_g"]), lam_x=vec(r["lam_x"]), t=t,
                    stats=st)
