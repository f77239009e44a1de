"""The reference solver: IPOPT 3.14 (MUMPS) bundled with the ``casadi`` wheel.

Two paths that never touch caspar's own adapters:

* :func:`ipopt_casadi` -- a CasADi problem dict through ``casadi.nlpsol('ipopt')``;
* :func:`ipopt_nl` -- a Pyomo model written by Pyomo's NL writer and read back by
  ``casadi.NlpBuilder().import_nl``, then ``nlpsol('ipopt')``: the same model text any
  AMPL-interfaced solver would receive.

Both return a :class:`RefResult` with IPOPT's status, objective (in the model's own
sense), iterations and times (``build``: problem construction / NL write and import
plus ``nlpsol`` setup; ``solve``: the call).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass

import numpy as np


@dataclass
class RefResult:
    status: str
    f: float
    iterations: int
    build: float
    solve: float
    x: np.ndarray
    success: bool


def _ipopt_opts(tol: float, max_iter: int, extra: dict | None):
    o = {"print_level": 0, "sb": "yes", "tol": tol, "max_iter": max_iter}
    o.update(extra or {})
    return {"print_time": False, "ipopt": o}


def ipopt_casadi(nlp, args, tol: float = 1e-8, max_iter: int = 3000, options=None,
                 expand_mx: bool = False, setup=None) -> RefResult:
    """Solve a CasADi problem dict with IPOPT.  ``args``: ``x0, lbx, ubx, lbg, ubg, p``.
    ``options``: IPOPT options; ``expand_mx``: expand an MX graph to SX first (so IPOPT
    evaluates SX code, as ``caspar demo`` does); ``setup``: a callable returning nlpsol
    options that override these, timed as part of the build."""
    import casadi as ca

    args = {k: v for k, v in args.items() if k in ("x0", "lbx", "ubx", "lbg", "ubg", "p")}
    opts = _ipopt_opts(tol, max_iter, options)
    if expand_mx and isinstance(nlp["x"], ca.MX):
        opts["expand"] = True
    t = time.perf_counter()
    if setup is not None:
        opts.update(setup())
    S = ca.nlpsol("ipopt_ref", "ipopt", nlp, opts)
    build = time.perf_counter() - t
    t = time.perf_counter()
    r = S(**args)
    solve = time.perf_counter() - t
    st = S.stats()
    return RefResult(status=st["return_status"], f=float(r["f"]), iterations=int(st["iter_count"]),
                     build=build, solve=solve, x=np.asarray(r["x"]).ravel(),
                     success=bool(st["success"]))


def nl_problem(model):
    """Write ``model`` with Pyomo's NL writer, import it with ``casadi.NlpBuilder``.

    Returns ``(nlp, args, sense)``: the CasADi problem dict, the solve arguments, and
    ``+1`` / ``-1`` for minimize / maximize (the NL objective is always stated as
    written; ``sense`` says how to read it)."""
    import casadi as ca
    import pyomo.environ as pyo

    objs = list(model.component_data_objects(pyo.Objective, active=True))
    if len(objs) != 1:
        raise ValueError(f"expected one active objective, found {len(objs)}")
    sense = 1 if objs[0].sense == pyo.minimize else -1
    fd, path = tempfile.mkstemp(suffix=".nl")
    os.close(fd)
    try:
        model.write(path, format="nl", io_options={"symbolic_solver_labels": False})
        nl = ca.NlpBuilder()
        nl.import_nl(path, {"verbose": False})
    finally:
        for p in (path, path[:-3] + ".row", path[:-3] + ".col"):
            if os.path.exists(p):
                os.remove(p)
    x = ca.vertcat(*nl.x)
    g = ca.vertcat(*nl.g) if nl.g else ca.MX(0, 1) if isinstance(nl.f, ca.MX) else ca.SX(0, 1)
    nlp = {"x": x, "f": nl.f, "g": g}
    args = dict(x0=np.array(nl.x_init, float), lbx=np.array(nl.x_lb, float),
                ubx=np.array(nl.x_ub, float), lbg=np.array(nl.g_lb, float),
                ubg=np.array(nl.g_ub, float))
    return nlp, args, sense


def ipopt_nl(model, tol: float = 1e-8, max_iter: int = 3000, options=None) -> RefResult:
    """Solve a Pyomo model with IPOPT through the NL file path (see the module)."""
    t = time.perf_counter()
    nlp, args, sense = nl_problem(model)
    t_nl = time.perf_counter() - t
    r = ipopt_casadi(nlp, args, tol=tol, max_iter=max_iter, options=options)
    r.build += t_nl
    return r
