"""caspar's interior-point solver vs IPOPT (CasADi's bundled 3.14) on the problem bank.

For every problem both solvers run in the same session on the same CasADi expressions:
same status class, objective within 1e-6 relative (+1e-8 absolute), iterations at most
2x IPOPT's (+3 for tiny counts), and the median iteration ratio over the bank <= 1.3.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from caspar_backend.solver.status import STATUSES
from tests.support.problem_bank import bank
from tests.support.solver_harness import run_caspar, run_ipopt

PROBLEMS = {p.name: p for p in bank()}


@functools.lru_cache(maxsize=None)
def solved(name):
    d = dict(PROBLEMS[name].build(), options=PROBLEMS[name].options)
    return run_ipopt(d), run_caspar(d)


def _params():
    return [pytest.param(p.name, marks=pytest.mark.slow) if p.slow else p.name
            for p in bank()]


def test_bank_size():
    assert len(PROBLEMS) >= 40
    kinds = {p.kind for p in PROBLEMS.values()}
    assert {"optimal", "infeasible", "unbounded"} <= kinds


@pytest.mark.parametrize("name", _params())
def test_against_ipopt(name):
    p = PROBLEMS[name]
    ri, rc = solved(name)
    ki = STATUSES[ri["status"]].kind
    assert ki == p.kind, f"IPOPT itself: {ri['status']} (bank expects {p.kind})"
    assert rc.kind == ki, f"caspar {rc.status} ({rc.message}) vs IPOPT {ri['status']}"
    if ki == "optimal":
        assert abs(rc.f - ri["f"]) <= 1e-6 * max(1.0, abs(ri["f"])) + 1e-8, (rc.f, ri["f"])
        if p.f_opt is not None:
            assert abs(rc.f - p.f_opt) <= 1e-6 * max(1.0, abs(p.f_opt)), (rc.f, p.f_opt)
    assert rc.iterations <= 2 * ri["iter"] + 3, (rc.iterations, ri["iter"])
    if name.startswith("needs_restoration") or name.startswith("restoration"):
        assert any(r.restoration for r in rc.history), "restoration phase never ran"


def test_median_iteration_ratio():
    ratios = []
    for p in bank(include_slow=False):
        ri, rc = solved(p.name)
        ratios.append(rc.iterations / max(1, ri["iter"]))
    med = float(np.median(ratios))
    print(f"median iteration ratio caspar/IPOPT = {med:.3f} over {len(ratios)} problems")
    assert med <= 1.3


@pytest.mark.parametrize("name", ["hs071", "hs076", "hs014", "fixed_variables",
                                  "optimal_control_200"])
def test_multipliers_match_ipopt(name):
    ri, rc = solved(name)
    np.testing.assert_allclose(rc.x, ri["x"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rc.lam_g, ri["lam_g"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rc.lam_x, ri["lam_x"], rtol=1e-4, atol=1e-5)
