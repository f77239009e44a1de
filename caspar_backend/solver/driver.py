"""``solve_nlp``: validate, build the slack problem, run the interior-point method, map
the solution back to the user's space, print IPOPT's output."""

from __future__ import annotations

import sys
import time

import numpy as np

from ..errors import DeviceError
from .ipm import InteriorPoint, Shared, SolverStop
from .log import IterationLog, summary
from .nlp import EvalCounter, SlackNLP
from .options import resolve_options
from .result import SolveResult
from .status import STATUSES


def _vec(a, n, name, fill):
    if a is None:
        return np.full(n, fill, dtype=float)
    v = np.asarray(a, dtype=float).reshape(-1)
    if v.size == 1 and n != 1:
        v = np.full(n, float(v[0]))
    if v.size != n:
        raise ValueError(f"{name} has length {v.size}, expected {n}")
    return v.copy()


def solve_nlp(evaluator, lbx, ubx, lbg, ubg, x0, *, lam_g0=None, lam_x0=None,
              var_names=None, con_names=None, options=None) -> SolveResult:
    """Solve ``min f(x) s.t. lbg <= g(x) <= ubg, lbx <= x <= ubx`` with the evaluator's
    functions (see :mod:`caspar_backend.evaluators.base`); returns a
    :class:`SolveResult` in CasADi's multiplier sign convention.  Options are IPOPT's
    (:mod:`.options`); an unknown option raises OptionError."""
    t0 = time.perf_counter()
    opts = resolve_options(options)
    if opts.device != "cpu":
        raise DeviceError(f"device={opts.device!r} is not available in this solver yet; "
                          f"use device='cpu'")
    stream = opts.stream if opts.stream is not None else sys.stdout
    n, m = evaluator.n, evaluator.m
    lbx, ubx = _vec(lbx, n, "lbx", -np.inf), _vec(ubx, n, "ubx", np.inf)
    lbg, ubg = _vec(lbg, m, "lbg", -np.inf), _vec(ubg, m, "ubg", np.inf)
    x0 = _vec(x0, n, "x0", 0.0)
    if opts.print_level > 0 and opts.print_user_options and opts.user:
        stream.write("List of user-set options:\n")
        for k, v in opts.user.items():
            stream.write(f"  {k:<40s} = {v!r}\n")
    counter = EvalCounter()

    def early(status, msg):
        x = np.clip(x0, lbx, ubx)
        return SolveResult(x=x, f=float("nan"), g=np.full(m, np.nan), lam_g=np.zeros(m),
                           lam_x=np.zeros(n), status=status, iterations=0, message=msg,
                           timings=dict(total=time.perf_counter() - t0), counts={})

    bad = [nm for nm, a in (("lbx", lbx), ("ubx", ubx), ("lbg", lbg), ("ubg", ubg))
           if np.isnan(a).any()]
    if bad or (lbx > ubx).any() or (lbg > ubg).any():
        return early("Invalid_Problem_Definition",
                     "NaN bounds or lower bound above upper bound"
                     + (f" in {bad}" if bad else ""))
    if not np.all(np.isfinite(x0)):
        return early("Invalid_Problem_Definition", "x0 contains NaN or Inf")
    nlp = SlackNLP(evaluator, lbx, ubx, lbg, ubg, x0, opts, counter)
    n_eq = int(np.count_nonzero(nlp.eq))
    if n_eq > nlp.nx:
        return early("Not_Enough_Degrees_Of_Freedom",
                     f"{n_eq} equality constraints but only {nlp.nx} free variables")
    log = IterationLog(stream) if opts.print_level > 0 else None
    sh = Shared(opts, counter, log, t0)
    ipm = InteriorPoint(nlp, sh)
    message = ""
    try:
        w0 = nlp.initial_w(x0)
        y0 = None
        if lam_g0 is not None:
            y0 = _vec(lam_g0, m, "lam_g0", 0.0) * nlp.df / nlp.dc
        zL0 = zU0 = None
        if lam_x0 is not None:
            lx = _vec(lam_x0, n, "lam_x0", 0.0)[nlp.free] * nlp.df
            zw = np.zeros(nlp.nw)
            zw[:nlp.nx] = lx
            floor = opts.bound_mult_init_val * 1e-2
            zL0 = np.maximum(-zw[ipm.iL], floor)
            zU0 = np.maximum(zw[ipm.iU], floor)
        ipm.initialize(w0, y0=y0, zL0=zL0, zU0=zU0)
        status = ipm.run()
    except SolverStop as stop:
        status, message = stop.status, stop.message
    exit_msg = STATUSES[status].exit_message
    message = exit_msg + (f" {message}" if message else "")
    x, lam_g, lam_x = nlp.unscale(ipm.w, ipm.y, ipm.zL, ipm.zU, ipm.iL, ipm.iU)
    with np.errstate(all="ignore"):
        try:
            f = float(evaluator.obj(x))
            g = np.array(evaluator.cons(x, np.zeros(m)), dtype=float) if m else np.zeros(0)
        except Exception:
            f, g = float("nan"), np.full(m, np.nan)
    total = time.perf_counter() - t0
    t_fun = counter.seconds
    timings = dict(function_evaluations=t_fun, kkt_factorization=sh.t_factor,
                   kkt_solve=sh.t_solve, total=total,
                   other=max(0.0, total - t_fun - sh.t_factor - sh.t_solve))
    fe = {}
    if hasattr(ipm, "final_errors"):
        e, ue = ipm.final_errors
        fe = dict(scaled=dict(obj=ipm.f, dual=e["dual"], constr=e["constr"],
                              compl=e["compl"], E0=e["E0"]),
                  unscaled=dict(obj=f, dual=ue["dual"], constr=ue["constr"],
                                compl=ue["compl"],
                                E0=max(ue["dual"], ue["constr"], ue["compl"])))
    res = SolveResult(x=x, f=f, g=g, lam_g=lam_g, lam_x=lam_x, status=status,
                      iterations=sh.iter, message=message, timings=timings,
                      counts=dict(counter.counts), history=sh.history, final_errors=fe)
    if opts.print_level > 0:
        summary(stream, res, fe.get("scaled", {}), fe.get("unscaled", {}), counter.counts,
                timings, exit_msg, opts.print_timing_statistics)
    return res
