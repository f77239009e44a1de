"""A tiny step (IPOPT's DetectTinyStep: the full step accepted without a line search)
evaluates its trial point as any trial point: the barrier function there, whose slacks
switch to IPOPT's safe slacks where one is lost to rounding.  Evaluating f and h alone
left a zero slack in place: the bound multiplier's safeguard mu/s became inf, the dual
infeasibility inf, and hs036 at tol 1e-13 went through a restoration phase to
Restoration_Failed where IPOPT ends Optimal at iteration 14."""
import pytest

pytest.importorskip("casadi")

from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import run_caspar, run_ipopt  # noqa: E402


@pytest.mark.parametrize("path", ["no", "auto"])
def test_tiny_step_at_a_vanishing_slack_as_ipopt(path):
    p = {b.name: b for b in bank(include_slow=False)}["hs036"]
    d = dict(p.build(), options=p.options)
    ri = run_ipopt(d, {"tol": 1e-13})
    rc = run_caspar(d, {"tol": 1e-13, "compiled_path": path})
    assert (rc.status, rc.iterations) == (ri["status"], ri["iter"]) == ("Solve_Succeeded", 14)
    assert rc.f == pytest.approx(ri["f"], rel=1e-12)
