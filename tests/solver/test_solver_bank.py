"""caspar's interior-point solver vs IPOPT (CasADi's bundled 3.14) on the problem bank.

For every problem both solvers run in the same session on the same CasADi expressions:
same status class, objective within 1e-6 relative (+1e-8 absolute), iterations at most
2x IPOPT's (+3 for tiny counts), and the median iteration ratio over the bank <= 1.3.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.assertions import assert_matches_ipopt
from tests.support.problem_bank import bank
from tests.support.solver_harness import solved

PROBLEMS = {p.name: p for p in bank()}


def _params():
    return [pytest.param(p.name, marks=pytest.mark.slow) if p.slow else p.name
            for p in bank()]


def test_bank_size():
    assert len(PROBLEMS) >= 40
    kinds = {p.kind for p in PROBLEMS.values()}
    assert {"optimal", "infeasible", "unbounded"} <= kinds


@pytest.mark.parametrize("name", _params())
def test_against_ipopt(name):
    ri, rc = solved(PROBLEMS[name])
    assert_matches_ipopt(PROBLEMS[name], ri, rc)


def test_median_iteration_ratio():
    ratios = []
    for p in bank(include_slow=False):
        ri, rc = solved(p)
        ratios.append(rc.iterations / max(1, ri["iter"]))
    med = float(np.median(ratios))
    print(f"median iteration ratio caspar/IPOPT = {med:.3f} over {len(ratios)} problems")
    assert med <= 1.3


@pytest.mark.parametrize("name", ["hs071", "hs076", "hs014", "fixed_variables",
                                  "optimal_control_200"])
def test_multipliers_match_ipopt(name):
    ri, rc = solved(PROBLEMS[name])
    np.testing.assert_allclose(rc.x, ri["x"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rc.lam_g, ri["lam_g"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rc.lam_x, ri["lam_x"], rtol=1e-4, atol=1e-5)
