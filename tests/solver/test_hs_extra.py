"""caspar vs IPOPT (CasADi's bundled build) on the extra Hock-Schittkowski problems of
:mod:`hs_extra`, the same checks as :mod:`test_solver_bank`: same status class,
objective within 1e-6 relative (+1e-8 absolute), the published optimum where the standard
start leads IPOPT to it, and iterations at most 2x IPOPT's + 3.  caspar runs through its
public entry point, ``from_casadi(nlp).solve(...)``.

Problems where caspar and IPOPT disagree stay in, marked ``xfail(strict=False)`` with what
differs, so that they document the gap.
"""

from __future__ import annotations

import functools

import pytest

from caspar_backend import from_casadi
from caspar_backend.solver.status import STATUSES
from tests.support.hs_extra import hs_extra
from tests.support.solver_harness import run_ipopt

PROBLEMS = {p.name: p for p in hs_extra()}

# name -> what differs (IPOPT status/iters/f vs caspar status/iters/f, as observed)
# (hs013, the degenerate cusp optimum, matches since the static term of a row with a
# slack is bounded by the slack's pivot: Solve_Succeeded, f = IPOPT's to 5e-9; hs099,
# f ~ -8e8, since the mu floor poses compl_inf_tol to the scaled problem as IPOPT does;
# hs054 (IPOPT's 15 iterations, f = -0.90807476) since the first block's static term is
# relative to each column: x6's pivot is 3.4e-18, tests/test_primal_static_term.py)
MISMATCHES: dict = {}


def run_caspar_public(d, options=()):
    nlp = {"x": d["x"], "f": d["f"]}
    if d["g"] is not None:
        nlp["g"] = d["g"]
    opts = {"print_level": 0}
    opts.update(dict(options))
    return from_casadi(nlp).solve(d["x0"], lbx=d["lbx"], ubx=d["ubx"], lbg=d["lbg"],
                                  ubg=d["ubg"], **opts)


@functools.lru_cache(maxsize=None)
def solved(name):
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    return run_ipopt(d), run_caspar_public(d, p.options)


def _params():
    out = []
    for p in hs_extra():
        marks = []
        if p.slow:
            marks.append(pytest.mark.slow)
        if p.name in MISMATCHES:
            marks.append(pytest.mark.xfail(strict=False, reason=MISMATCHES[p.name]))
        out.append(pytest.param(p.name, marks=marks, id=p.name))
    return out


def test_hs_extra_size():
    assert len(PROBLEMS) >= 25
    assert len(set(PROBLEMS)) == len(hs_extra())
    from tests.support import problem_bank

    assert not set(PROBLEMS) & {p.name for p in problem_bank.bank()}


@pytest.mark.parametrize("name", _params())
def test_hs_extra_against_ipopt(name):
    p = PROBLEMS[name]
    ri, rc = solved(name)
    ki = STATUSES[ri["status"]].kind
    assert ki == p.kind, f"IPOPT itself: {ri['status']} (expected {p.kind})"
    assert rc.kind == ki, f"caspar {rc.status} ({rc.message}) vs IPOPT {ri['status']}"
    if ki == "optimal":
        assert abs(rc.f - ri["f"]) <= 1e-6 * max(1.0, abs(ri["f"])) + 1e-8, (rc.f, ri["f"])
        if p.f_opt is not None:
            assert abs(rc.f - p.f_opt) <= 1e-6 * max(1.0, abs(p.f_opt)), (rc.f, p.f_opt)
            assert abs(ri["f"] - p.f_opt) <= 1e-6 * max(1.0, abs(p.f_opt)), (ri["f"], p.f_opt)
    assert rc.iterations <= 2 * ri["iter"] + 3, (rc.iterations, ri["iter"])
