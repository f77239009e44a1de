"""Shared helpers of the solver tests and benchmark: run IPOPT and caspar on one bank
problem.  Switching the tests to the CasADi adapter is a one-line change in
:func:`make_evaluator`."""

from __future__ import annotations

import functools

from caspar_backend import from_casadi
from caspar_backend.solver import solve_nlp
from tests.support import ipopt
from tests.support.casadi_evaluator import CasadiEvaluator


def _nlp(d):
    nlp = {"x": d["x"], "f": d["f"]}
    if d["g"] is not None:
        nlp["g"] = d["g"]
    return nlp


def make_evaluator(d):
    """caspar's own pipeline: CasADi adapter -> pattern groups -> NumPy evaluator."""
    return from_casadi(_nlp(d)).evaluator()


def make_reference_evaluator(d):
    """CasADi's own functions behind the Evaluator interface (solver tests that must
    not depend on the compiler)."""
    return CasadiEvaluator(d["x"], d["f"], d["g"])


def run_ipopt(d, options=None):
    """IPOPT on a bank problem's dict (its ``options`` and then ``options``; caspar's
    ``device`` and ``stream`` are not IPOPT's), as a dict: status, f, iter, x, t,
    lam_g, lam_x."""
    options = dict(d.get("options", ()), **(options or {}))
    args = dict(x0=d["x0"], lbx=d["lbx"], ubx=d["ubx"])
    if d["g"] is not None:
        args.update(lbg=d["lbg"], ubg=d["ubg"])
    r = ipopt.solve(_nlp(d), args, {k: v for k, v in options.items()
                                    if k not in ("device", "stream")})
    return dict(status=r.status, f=r.f, iter=r.iterations, x=r.x, t=r.t,
                lam_g=r.lam_g, lam_x=r.lam_x)


def run_caspar(d, options=None, public=False):
    """caspar on a bank problem's dict: ``solve_nlp`` on the compiled evaluator, or with
    ``public`` the user's path ``from_casadi(nlp).solve(...)``."""
    opts = {"print_level": 0}
    opts.update(dict(d.get("options", ())))
    opts.update(options or {})
    if public:
        return from_casadi(_nlp(d)).solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"],
                                          lbg=d["lbg"], ubg=d["ubg"], **opts)
    return solve_nlp(make_evaluator(d), d["lbx"], d["ubx"], d["lbg"], d["ubg"], d["x0"],
                     options=opts)


@functools.lru_cache(maxsize=None)
def _ipopt_of(problem):
    return run_ipopt(dict(problem.build(), options=problem.options))


@functools.lru_cache(maxsize=None)
def _caspar_of(problem, options, public):
    return run_caspar(dict(problem.build(), options=problem.options), dict(options), public)


def solved(problem, options=None, public=False):
    """``(IPOPT's dict, caspar's result)`` for a :class:`~tests.support.problem_bank.
    BankProblem` with its own options; caspar also gets ``options`` (``public`` as in
    :func:`run_caspar`).  Cached for the session: several tests read one solve, and
    the IPOPT solve is shared by every caspar configuration."""
    return _ipopt_of(problem), _caspar_of(problem, tuple(sorted((options or {}).items())),
                                          public)
