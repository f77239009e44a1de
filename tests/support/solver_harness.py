"""Shared helpers of the solver tests and benchmark: run IPOPT and caspar on one bank
problem.  Switching the tests to the CasADi adapter is a one-line change in
:func:`make_evaluator`."""

from __future__ import annotations

import time

import casadi as cs
import numpy as np

from caspar_backend import from_casadi
from caspar_backend.solver import solve_nlp
from tests.support.casadi_evaluator import CasadiEvaluator


def make_evaluator(d):
    """caspar's own pipeline: CasADi adapter -> pattern groups -> NumPy evaluator."""
    nlp = {"x": d["x"], "f": d["f"]}
    if d["g"] is not None:
        nlp["g"] = d["g"]
    return from_casadi(nlp).evaluator()


def make_reference_evaluator(d):
    """CasADi's own functions behind the Evaluator interface (solver tests that must
    not depend on the compiler)."""
    return CasadiEvaluator(d["x"], d["f"], d["g"])


def _yes(v):
    return ("yes" if v else "no") if isinstance(v, bool) else v


def run_ipopt(d, options=None):
    options = dict(d.get("options", ()), **(options or {}))
    nlp = {"x": d["x"], "f": d["f"]}
    if d["g"] is not None:
        nlp["g"] = d["g"]
    ipopt_opts = {"print_level": 0, "sb": "yes"}
    for k, v in (options or {}).items():
        if k not in ("device", "stream"):
            ipopt_opts[k] = _yes(v)
    S = cs.nlpsol("ipopt", "ipopt", nlp, {"ipopt": ipopt_opts, "print_time": False,
                                          "error_on_fail": False})
    args = dict(x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"])
    if d["g"] is not None:
        args.update(lbg=d["lbg"], ubg=d["ubg"])
    t0 = time.perf_counter()
    r = S(**args)
    st = S.stats()
    return dict(status=st["return_status"], f=float(r["f"]), iter=int(st["iter_count"]),
                x=np.array(r["x"]).ravel(), t=time.perf_counter() - t0,
                lam_g=np.array(r["lam_g"]).ravel(), lam_x=np.array(r["lam_x"]).ravel())


def run_caspar(d, options=None):
    ev = make_evaluator(d)
    opts = {"print_level": 0}
    opts.update(dict(d.get("options", ())))
    opts.update(options or {})
    return solve_nlp(ev, d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"], options=opts)
