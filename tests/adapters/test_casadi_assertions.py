"""casadi's ``MX.attachAssert`` in an NLP solved by caspar's nlpsol: checked at every
point, as IPOPT's nlpsol (which evaluates the MX Functions) checks it.  Reference: the
casadi wheel's IPOPT without ``expand`` (the assertion raises inside its evaluations)."""

from __future__ import annotations

import importlib
import inspect
import pathlib
import re
import warnings

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

from caspar_backend.adapters.casadi.assertions import AssertionCheck  # noqa: E402
from caspar_backend.adapters.casadi.chains import assertion_sites  # noqa: E402
from caspar_backend.adapters.casadi.frontend import nlpsol  # noqa: E402
from caspar_backend.evaluators.base import Evaluator  # noqa: E402
from caspar_backend.evaluators.guarded import SHORTCUTS, GuardedEvaluator  # noqa: E402
from caspar_backend.evaluators.observed import ObservedEvaluator  # noqa: E402
from caspar_backend.evaluators.wrapped import WrappedEvaluator  # noqa: E402

QUIET = {"print_time": False}


def _both(nlp, **call):
    """(caspar's result, stats, warnings), (IPOPT's result, stats) of one call."""
    S = nlpsol("s", "caspar", nlp, {**QUIET, "caspar": {"print_level": 0}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = S(**call)
    I = ca.nlpsol("i", "ipopt", nlp, {**QUIET, "ipopt": {"print_level": 0}})
    ri = I(**call)
    return (r, S.stats(), [str(w.message) for w in caught]), (ri, I.stats())


def test_an_assertion_failing_at_the_start_ends_the_solve_with_its_message(capfd):
    # casadi's own test (test/python/nlp.py, test_exception_in_oraclefunction)
    x = ca.MX.sym("x")
    nlp = {"x": x, "f": (x - 1) ** 2, "g": x.attachAssert(x != x, "Cuckoo")}
    (r, st, caught), (_, sti) = _both(nlp, lbx=-10, ubx=10, lbg=-10, ubg=10)
    capfd.readouterr()
    assert st["return_status"] == sti["return_status"] == "Invalid_Number_Detected"
    assert st["iter_count"] == sti["iter_count"] == 0
    assert st["unified_return_status"] == "SOLVER_RET_NAN"
    assert any("Assertion error: Cuckoo" in w for w in caught)
    assert float(r["x"]) == 0.0


def test_a_failing_trial_point_is_cut_back_as_ipopt_cuts_it():
    # f = x^4/4 - x from x0 = 0.1: Newton's first step overshoots to x = 33.4, past the
    # assertion x < 5; IPOPT's line search cuts back and converges to x = 1
    x = ca.MX.sym("x")
    guarded = x.attachAssert(x < 5, "x escaped")
    nlp = {"x": x, "f": guarded ** 4 / 4 - guarded}
    (r, st, caught), (ri, sti) = _both(nlp, x0=0.1)
    assert st["return_status"] == sti["return_status"] == "Solve_Succeeded"
    assert st["iter_count"] == sti["iter_count"]
    assert float(r["x"]) == pytest.approx(float(ri["x"]), abs=1e-8)
    assert float(r["x"]) == pytest.approx(1.0, abs=1e-8)
    assert any("x escaped" in w for w in caught)        # the trial point failed


def test_assertions_inside_called_and_mapped_functions_are_found_and_checked():
    y = ca.MX.sym("y")
    inner = ca.Function("inner", [y], [y.attachAssert(y < 5, "inner escaped")])
    X = ca.MX.sym("X", 3)
    mapped = ca.Function("mapped", [X], [inner.map(3)(X.T).T])
    assert assertion_sites(mapped) == ["inner"]
    outer = ca.Function("outer", [X], [mapped(X) + 1])
    assert assertion_sites(outer) == ["inner"]      # inner once, through two levels
    e = ca.sum1(outer(X) - 1)
    nlp = {"x": X, "f": e ** 4 / 4 - e}
    (r, st, caught), (ri, sti) = _both(nlp, x0=[0.1 / 3] * 3)
    assert st["return_status"] == sti["return_status"] == "Solve_Succeeded"
    assert st["iter_count"] == sti["iter_count"]
    assert float(np.asarray(r["x"]).sum()) == pytest.approx(1.0, abs=1e-8)
    assert any("inner escaped" in w for w in caught)


def test_assertions_that_hold_change_nothing():
    x = ca.MX.sym("x", 2)
    f = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
    plain = {"x": x, "f": f, "g": x[0] + x[1]}
    held = {"x": x, "f": f.attachAssert(ca.fabs(x[0]) < 1e6, "never"), "g": x[0] + x[1]}
    call = dict(x0=[-1.2, 1.0], lbg=-10, ubg=10)
    outs = []
    for nlp in (plain, held):
        S = nlpsol("s", "caspar", nlp, {**QUIET, "caspar": {"print_level": 0}})
        outs.append((S(**call), S.stats()))
    (a, sa), (b, sb) = outs
    assert sa["iter_count"] == sb["iter_count"] and sa["return_status"] == sb["return_status"]
    np.testing.assert_array_equal(np.asarray(a["x"]), np.asarray(b["x"]))
    assert AssertionCheck(held, ["caspar_nlp"])([1.0, 1.0], []) is None
    assert "never" in AssertionCheck(held, ["caspar_nlp"])([2e6, 1.0], [])


def test_an_sx_problem_and_an_mx_problem_without_assertions_have_none():
    from caspar_backend.adapters.casadi.frontend import NlpsolCore

    x = ca.SX.sym("x")
    assert NlpsolCore("s", {"x": x, "f": x ** 2}, QUIET).assertions is None
    m = ca.MX.sym("m")
    assert NlpsolCore("s", {"x": m, "f": ca.sin(m) ** 2}, QUIET).assertions is None
    core = NlpsolCore("s", {"x": m, "f": m.attachAssert(m < 1, "a") ** 2}, QUIET)
    assert core.assertions.sites == ["caspar_nlp"]


# ------------------------------------------------------------------- the wrapper
class _Square(Evaluator):
    """f = sum x^2, g = x (a host evaluator for the wrapper's tests)."""

    n = m = 2
    n_params = 0
    jac_rows = jac_cols = hess_rows = hess_cols = np.arange(2)

    def set_params(self, p):
        self.p = np.zeros(0)

    def obj(self, x, p=None):
        return float(np.sum(np.asarray(x) ** 2))

    def grad(self, x, out=None, p=None):
        return _put(out, 2 * np.asarray(x))

    def cons(self, x, out=None, p=None):
        return _put(out, np.asarray(x, float))

    def jac_values(self, x, out=None, p=None):
        return _put(out, np.ones(2))

    def hess_values(self, x, lam, obj_factor=1.0, out=None, p=None):
        return _put(out, 2 * obj_factor * np.ones(2))

    def obj_and_cons(self, x, gout):
        raise AssertionError("a shortcut must not bypass the guard")


def _put(out, v):
    if out is None:
        return v
    out[...] = v
    return out


def test_the_guard_makes_every_value_nan_where_the_check_fails():
    seen = []
    base = _Square()
    base.set_params(None)
    ev = GuardedEvaluator(base, lambda x, p: "left the box" if x[0] > 1 else None,
                          seen.append)
    good, bad = np.array([0.5, 1.0]), np.array([2.0, 1.0])
    assert ev.obj(good) == 1.25 and ev.failure(good) is None
    assert np.isnan(ev.obj(bad))
    for out in (ev.grad(bad), ev.cons(bad, np.zeros(2)), ev.jac_values(bad),
                ev.hess_values(bad, np.ones(2))):
        assert np.isnan(out).all()
    assert ev.describe_nonfinite(bad) == "left the box"
    assert seen == ["left the box"]                  # once per new failing point
    assert not hasattr(ev, "obj_and_cons")           # the shortcut withheld
    np.testing.assert_array_equal(ev.grad(good), [1.0, 2.0])


def _evaluator_classes() -> list:
    """Every concrete Evaluator class of the installed package's sources."""
    root = pathlib.Path(__file__).resolve().parents[2]
    out = []
    for folder, dotted in (("caspar_backend", "caspar_backend"),
                           ("adapters", "caspar_backend.adapters")):
        for f in (root / folder).rglob("*.py"):
            if re.search(r"^class \w+\((\w+\.)?Evaluator\)", f.read_text(), re.M):
                parts = f.relative_to(root / folder).with_suffix("").parts
                mod = importlib.import_module(".".join((dotted, *parts)))
                out += [c for _, c in inspect.getmembers(mod, inspect.isclass)
                        if issubclass(c, Evaluator) and c.__module__ == mod.__name__]
    return out


def test_every_evaluation_shortcut_of_an_evaluator_is_withheld_or_guarded():
    """An evaluator method of a point outside the interface would let the solver evaluate
    past the guard (or unreported): each must be guarded (defined by GuardedEvaluator and
    ObservedEvaluator) or withheld."""
    classes = _evaluator_classes()
    assert len(classes) >= 5
    wrappers = (GuardedEvaluator, ObservedEvaluator)
    for cls in classes:
        if cls in wrappers:         # (their own methods: checks and descriptions)
            continue
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("_") or hasattr(Evaluator, name):
                continue
            params = list(inspect.signature(fn).parameters)[1:2]
            if params == ["x"]:
                # (the same rule for the evaluator that reports each evaluation)
                for wrapper in wrappers:
                    defined = any(name in vars(k) for k in wrapper.__mro__
                                  if issubclass(k, WrappedEvaluator))
                    assert name in SHORTCUTS or defined, (cls, wrapper, name)


def test_the_failure_is_warned_in_every_solve_once():
    """casadi warns of every failed evaluation; caspar once per message in each solve --
    also for the same script line solving again under Python's default filter (which
    shows a warning once per line: casadi's nlp.py runs one solve per solver there)."""
    x = ca.MX.sym("x")
    nlp = {"x": x, "f": (x - 1) ** 2, "g": x.attachAssert(x > 5, "Cuckoo")}
    S = nlpsol("s", "caspar", nlp, {**QUIET, "caspar": {"print_level": 0}})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for _ in range(2):
            S(lbx=-10, ubx=10, lbg=-10, ubg=10)
    assert sum("Cuckoo" in str(w.message) for w in caught) == 2
