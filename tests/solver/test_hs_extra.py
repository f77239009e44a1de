"""caspar vs IPOPT (CasADi's bundled build) on the extra Hock-Schittkowski problems of
:mod:`tests.support.hs_extra`, the checks of :mod:`tests.solver.test_solver_bank`: same
status class, objective within 1e-6 relative (+1e-8 absolute), the published optimum
where the standard start leads IPOPT to it, and iterations at most 2x IPOPT's + 3.
caspar runs through its public entry point, ``from_casadi(nlp).solve(...)``.

Problems where caspar and IPOPT disagree stay in, marked ``xfail(strict=False)`` with what
differs, so that they document the gap.
"""

from __future__ import annotations

import pytest

from tests.support.assertions import assert_matches_ipopt
from tests.support.hs_extra import hs_extra
from tests.support.solver_harness import solved

PROBLEMS = {p.name: p for p in hs_extra()}

# name -> what differs (IPOPT status/iters/f vs caspar status/iters/f, as observed)
# (hs013, the degenerate cusp optimum, matches since the static term of a row with a
# slack is bounded by the slack's pivot: Solve_Succeeded, f = IPOPT's to 5e-9; hs099,
# f ~ -8e8, since the mu floor poses compl_inf_tol to the scaled problem as IPOPT does;
# hs054 (IPOPT's 15 iterations, f = -0.90807476) since the first block's static term is
# relative to each column: x6's pivot is 3.4e-18, tests/kkt/test_static_regularization.py)
MISMATCHES: dict = {}


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
    ri, rc = solved(PROBLEMS[name], public=True)
    assert_matches_ipopt(PROBLEMS[name], ri, rc, ipopt_at_f_opt=True)
