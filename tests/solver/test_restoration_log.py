"""The restoration phase in the log and the iteration count, as IPOPT prints and counts
them (IPOPT 3.14 through casadi, print_level 5, read from the process's stdout).

IPOPT counts the iteration whose line search failed: a restoration phase entered at
iteration k prints its starting point as ``k+1 r`` (tagged R, with the failed search's
step after its last reduction and its trial count plus one), its iterations go on from
there, the point it returns
is its last line, and the next line is the next step's.  Its intermediate callback sees
the returned point once more (without a line).  caspar numbered the phase from k and
printed the returned point again, so a solve with one restoration phase ended an
iteration short of IPOPT's count on the same iterates (needs_restoration_exp: 20
against 21).  A phase that proves local infeasibility does not print its last point
(see test_local_infeasibility_ends_without_the_last_line)."""
import re

import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import caspar_backend as cb  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import _nlp  # noqa: E402

LINE = re.compile(r"^\s*(\d+r?)\s*[-+0-9.e]+\s+[-+0-9.e]+\s+[-+0-9.e]+\s+[-+0-9.]+\s+"
                  r"[-+0-9.e]+\s+\S+\s+[-+0-9.e]+\s+([-+0-9.e]+)([a-zA-Z ]?)\s+(\d+)\s*$")


def _lines(text):
    """(label, alpha_pr, tag, ls) of each iteration line of an IPOPT-format log."""
    return [m.groups() for m in map(LINE.match, text.splitlines()) if m]


def _both(name, capfd):
    bp = {b.name: b for b in bank(include_slow=False)}[name]
    d = bp.build()
    nlp = _nlp(d)
    kw = {k: d[k] for k in ("x0", "lbx", "ubx", "lbg", "ubg") if k in d}
    opts = dict(bp.options)
    S = ca.nlpsol("S", "ipopt", nlp, {
        "print_time": False, "ipopt.print_level": 5,
        **{"ipopt." + k: ({True: "yes", False: "no"}[v] if isinstance(v, bool) else v)
           for k, v in opts.items()}})
    S(**kw)
    ipopt_log = capfd.readouterr().out
    r = cb.from_casadi(nlp).solve(**kw, print_level=5, **opts)
    caspar_log = capfd.readouterr().out
    return S.stats(), _lines(ipopt_log), r, _lines(caspar_log)


def test_start_with_resto_counts_and_prints_as_ipopt(capfd):
    stats, ipopt, r, caspar = _both("needs_restoration_exp", capfd)
    labels = [g[0] for g in ipopt]
    assert labels[:4] == ["0", "1r", "2r", "3"]
    assert [g[0] for g in caspar] == labels
    assert r.iterations == stats["iter_count"] == 21
    assert caspar[1][2] == ipopt[1][2] == "R" and caspar[1][3] == ipopt[1][3]
    # the callback's records: one per line, and the returned point once more
    ref = np.array(stats["iterations"]["obj"])
    got = np.array([h.objective for h in r.history])
    assert got.size == ref.size == len(labels) + 1
    np.testing.assert_allclose(got[:5], ref[:5], rtol=1e-9)     # through the phase
    np.testing.assert_allclose(got, ref, rtol=1e-4)             # (rounding grows after)


def test_restoration_after_a_failed_search_is_numbered_as_ipopt(capfd):
    stats, ipopt, r, caspar = _both("infeasible_disc_halfplane", capfd)
    k = next(i for i, g in enumerate(ipopt) if g[0].endswith("r"))
    assert ipopt[k][0] == "5r" and ipopt[k][2] == "R"
    assert caspar[k] == ipopt[k]             # the failed search's step and count too
    assert caspar == ipopt
    assert r.status == stats["return_status"] == "Infeasible_Problem_Detected"
    assert r.iterations == stats["iter_count"] == 12


@pytest.mark.parametrize("name", ["infeasible_disc_halfplane",
                                  "restoration_to_local_infeasibility_wb"])
def test_local_infeasibility_ends_without_the_last_line(name, capfd):
    """A restoration problem solved at a point of local infeasibility ends IPOPT's run
    by an exception in its convergence test: the last point is returned and seen by the
    intermediate callback, but not printed, and the count is the last line's.  The
    steps before are IPOPT's: the proximity term's derivatives keep the weight
    sqrt(mu) of their point's evaluation when mu decreases (RestorationNLP.set_mu)."""
    stats, ipopt, r, caspar = _both(name, capfd)
    assert caspar == ipopt
    assert r.iterations == stats["iter_count"]
    ref = np.array(stats["iterations"]["obj"])
    got = np.array([h.objective for h in r.history])
    assert got.size == ref.size > len(ipopt)     # the unprinted last point included
    np.testing.assert_allclose(got, ref, rtol=1e-7)


def test_theta_max_is_set_at_the_first_trial_point(capfd):
    """IPOPT sets theta_max = 1e4 max(1, theta) (and theta_min) at the first trial
    point's test, not at the start: with start_with_resto it is the restoration phase's
    point's theta (needs_restoration_circle: 1.8e4, not the starting point's), and the
    first search after the phase backtracks eight times to get below it."""
    stats, ipopt, r, caspar = _both("needs_restoration_circle", capfd)
    assert caspar == ipopt
    assert caspar[3] == ("3", "7.81e-03", "f", "8")
    assert r.iterations == stats["iter_count"]
