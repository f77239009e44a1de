"""Pyomo's contrib-solver suite (pyomo/contrib/solver/tests/solvers/test_solvers.py)
with caspar in ipopt's place (see contrib_suite.py for how it is loaded).

Each of the suite's caspar methods is one pytest case; the ones caspar fails today
are xfail with the reason (not strict: the core is being changed
under these tests, and test_objective_changes passes alone but not after the rest)."""

from __future__ import annotations

import unittest

import pytest

pytest.importorskip("parameterized")   # the suite's own dependency

from tests.adapters.conformance.contrib_suite import load  # noqa: E402

_MOD = load()

# caspar differs from Pyomo's ipopt here (reasons in the conformance report)
KNOWN = {
}


def _cases():
    loader = unittest.TestLoader()
    for cname in sorted(dir(_MOD)):
        cls = getattr(_MOD, cname)
        if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
            for meth in loader.getTestCaseNames(cls):
                if meth.endswith("_caspar"):
                    marks = [pytest.mark.xfail(reason=r, strict=False)
                             for k, r in KNOWN.items() if meth.startswith(k + "_")]
                    yield pytest.param(cls, meth, id=f"{cname}.{meth}", marks=marks)


@pytest.mark.parametrize("cls,meth", list(_cases()))
def test_pyomo_contrib_suite(cls, meth):
    result = unittest.TestResult()
    cls(meth).run(result)
    if result.skipped:
        pytest.skip(result.skipped[0][1])
    problems = result.errors + result.failures
    assert not problems, problems[0][1]
