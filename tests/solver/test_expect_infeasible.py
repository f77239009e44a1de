"""IPOPT's expect_infeasible_problem heuristics (caspar_backend.solver.linesearch's
module doc) against IPOPT 3.14 through casadi: status, iterations and the printed
iteration lines.  Bank problems whose IPOPT iterations the option changes
(restoration_to_local_infeasibility_wb 16 -> 14, needs_restoration_circle 18 -> 20,
needs_restoration_exp 21 -> 27), with a small expect_infeasible_problem_ytol so that the
multiplier test fires (hs007: the restoration phase entered without a trial, its first
line carrying the iteration's regularization), and square problems (the heuristics end
only at a feasible point there) from random starts."""
import re

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import caspar_backend as cb  # noqa: E402
from caspar_backend.casadi import nlpsol  # noqa: E402
from tests.solver.test_square_problems import _cases  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

LINE = re.compile(r"^\s*\d+r?\s*[-+0-9.e]+\s+[-+0-9.e]+\s+[-+0-9.e]+\s+[-+0-9.]+\s+"
                  r"[-+0-9.e]+\s+\S+\s+[-+0-9.e]+\s+[-+0-9.e]+[a-zA-Z ]?\s+\d+\s*$")


def _lines(text):
    """(label, tag and trial count) of each iteration line, and its numbers."""
    out = []
    for ln in text.splitlines():
        if LINE.match(ln):
            ln = re.sub(r"^(\s*\d+r?)(-)", r"\1 \2", ln)       # '8r-1.0e+00'
            f = ln.split()
            tag = f[9] if len(f) == 11 else f[8][-1] + f[9]
            nums = [float(v) for v in f[1:8] if v != "-"] + [float(f[8].rstrip("fhFHTwsSrR"))]
            out.append(((f[0], tag), nums))
    return out


def _same_lines(a, b):
    """The same labels, step tags and trial counts; the numbers to 1e-2 (rounding grows
    through the restoration phases: needs_restoration_exp's 13r objective differs in
    the third digit)."""
    assert [k for k, _ in a] == [k for k, _ in b]
    for (k, x), (_, y) in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-2, atol=1e-9, err_msg=str(k))


def _both(name, options, capfd):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    d = bp.build()
    nlp = _nlp(d)
    kw = {k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg") if k in d}
    opts = {**dict(bp.options), **options}
    S = ca.nlpsol("S", "ipopt", nlp, {"print_time": False, "ipopt": {
        "print_level": 5, **{k: ({True: "yes", False: "no"}[v] if isinstance(v, bool)
                                 else v) for k, v in opts.items()}}})
    S(**kw)
    ipopt_log = capfd.readouterr().out
    r = cb.from_casadi(nlp).solve(**kw, print_level=5, **opts)
    caspar_log = capfd.readouterr().out
    return S.stats(), _lines(ipopt_log), r, _lines(caspar_log)


@pytest.mark.parametrize("name, ytol", [
    ("restoration_to_local_infeasibility_wb", 1e8), ("needs_restoration_circle", 1e8),
    ("needs_restoration_exp", 1e8), ("hs007", 10.0), ("hs071", 10.0)])
def test_expect_infeasible_problem_as_ipopt(name, ytol, capfd):
    stats, ipopt, r, caspar = _both(name, {"expect_infeasible_problem": True,
                                           "expect_infeasible_problem_ytol": ytol}, capfd)
    assert r.status == stats["return_status"]
    assert r.iterations == stats["iter_count"]
    _same_lines(caspar, ipopt)


def test_expect_infeasible_problem_changes_the_solve(capfd):
    """The option is not ignored: without it the same problem takes IPOPT's other
    count (needs_restoration_exp: 21)."""
    stats, _, r, _ = _both("needs_restoration_exp", {}, capfd)
    assert r.iterations == stats["iter_count"] == 21


def test_square_problems_with_expect_infeasible_problem():
    """Square systems (tests/solver/test_square_problems.py) from 20 random starts each,
    the multiplier test at ytol 10: IPOPT's status and iterations and solution."""
    rng = np.random.default_rng(3)
    opts = {"expect_infeasible_problem": "yes", "expect_infeasible_problem_ytol": 10.0}
    for name, nlp, args in _cases():
        bounds = {k: v for k, v in args.items() if k != "x0"}
        R = ca.nlpsol("R", "ipopt", nlp, {"print_time": False, "ipopt": {
            "print_level": 0, "sb": "yes", **opts}})
        S = nlpsol("S", "caspar", nlp, {"print_time": False, "caspar": {
            "print_level": 0, **opts}})
        for _ in range(20):
            x0 = np.asarray(args["x0"]) + rng.uniform(-2, 2, len(args["x0"]))
            want, got = R(x0=x0, **bounds), S(x0=x0, **bounds)
            sr, ss = R.stats(), S.stats()
            assert (ss["return_status"], ss["iter_count"]) == (
                sr["return_status"], sr["iter_count"]), (name, x0)
            np.testing.assert_allclose(np.array(got["x"]), np.array(want["x"]),
                                       atol=1e-6)


def test_batch_with_expect_infeasible_problem_solves_each_instance():
    """The lockstep batch does not implement the heuristics: a batch with the option
    solves every instance by its own solve, as Problem.solve does."""
    bp = {b.name: b for b in bank(include_slow=False)}["needs_restoration_exp"]
    d = bp.build()
    P = cb.from_casadi(_nlp(d))
    kw = {k: d[k] for k in ("lbx", "ubx", "lbg", "ubg") if k in d}
    x0 = np.asarray(d["x0"], float)
    r = P.solve_batch(x0=np.stack([x0, x0]), **kw, expect_infeasible_problem=True,
                      print_level=0, **dict(bp.options))
    single = P.solve(x0, **kw, expect_infeasible_problem=True, print_level=0,
                     **dict(bp.options))
    assert list(r.iterations) == [single.iterations] * 2 == [27, 27]
