"""The condensed ("lifted") KKT system: conformance against dense algebra, the problem
bank against IPOPT with ``kkt_system='condensed'``, and the device path.

* :class:`~caspar_backend.kkt.condensed.CondensedKKT` on random small Newton systems
  (slacks, a slack without bounds, elastic columns, delta_w / delta_c): its inertia
  verdict is the dense matrix's, its solve is the dense solve to 1e-10, and it agrees
  with :class:`~caspar_backend.kkt.augmented.AugmentedKKT` on the same data.
* The problem bank (:mod:`problem_bank`) and the extra Hock-Schittkowski problems
  (:mod:`hs_extra`) with ``kkt_system='condensed'``: the checks of
  :mod:`test_solver_bank` (status class, objective within 1e-6 relative, iterations at
  most 2x IPOPT's + 3).  Observed 2026-11-30: 103 of 106 pass; :data:`KNOWN_MISMATCHES`
  lists the others with the reason (strict xfail: a fix shows up as a failure to
  update the list), so that they document the gap instead of disappearing.
* GPU (``@pytest.mark.gpu``): bank problems with ``device='cuda'`` reach the CPU
  condensed path's and IPOPT's status and objective.  The device code path itself is
  also checked on the CPU, in :mod:`test_gpu_solver`'s emulation.
"""

from __future__ import annotations

import numpy as np
import pytest

from caspar_backend.kkt import AugmentedKKT, CondensedKKT
from caspar_backend.kkt.pattern import row_pairs
from caspar_backend.linsolve import make_linear_solver

pytest.importorskip("qdldl")


# ====================================================================== algebra
def test_row_pairs_lists_every_pair_of_a_row_once():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 6, 40)
    p, q = row_pairs(rows)
    got = sorted(zip(p.tolist(), q.tolist()))
    want = sorted((a, b) if np.flatnonzero(rows == rows[a]).tolist().index(a)
                  <= np.flatnonzero(rows == rows[a]).tolist().index(b) else (b, a)
                  for a in range(40) for b in range(a, 40) if rows[a] == rows[b])
    assert got == want
    assert row_pairs(np.zeros(0, np.int64))[0].size == 0


def _system(rng, nx=7, m=4, ne=3, hess_scale=1.0, slack_coef=-1.0, free_row=True):
    """Random Newton-system data in the condensed layout w = [x; s; e]: dense W (lower
    COO, duplicated entries), a sparse Jx, slack i at column nx + i with coefficient
    ``slack_coef``, elastic columns with +-1 in random rows."""
    nw = nx + m + ne
    H = rng.standard_normal((nx, nx)) * hess_scale
    H = H + H.T
    hr, hc = np.tril_indices(nx)
    J = rng.standard_normal((m, nx)) * (rng.random((m, nx)) < 0.6)
    J[np.arange(m), np.arange(m) % nx] += 1.0
    jr, jc = np.nonzero(J)
    erow = rng.integers(0, m, ne)
    ecoef = rng.choice([-1.0, 1.0], ne)
    A = np.zeros((m, nw))
    A[:, :nx] = J
    A[np.arange(m), nx + np.arange(m)] = slack_coef
    A[erow, nx + m + np.arange(ne)] = ecoef
    rows = np.r_[jr, np.arange(m), erow]
    cols = np.r_[jc, nx + np.arange(m), nx + m + np.arange(ne)]
    sigma = rng.random(nw)
    sigma[:2] = 0.0                      # variables without bounds
    if free_row:
        sigma[nx] = 0.0                  # a constraint without bounds: its slack has none
    sigma[nx + m:] += 0.5                # elastic columns are bounded
    Wfull = np.zeros((nw, nw))
    Wfull[:nx, :nx] = H
    data = dict(hr=np.r_[hr, hr], hc=np.r_[hc, hc], hv=np.r_[H[hr, hc] / 2, H[hr, hc] / 2],
                jr=rows, jc=cols, jv=A[rows, cols], sigma=sigma)
    return data, Wfull, A


def _load(k, data):
    k.hess_values[:] = data["hv"]
    k.jac_values[:] = data["jv"]
    k.sigma[:] = data["sigma"]


def _dense(Wfull, A, sigma, dw, dc):
    m = A.shape[0]
    return np.block([[Wfull + np.diag(sigma + dw), A.T], [A, -dc * np.eye(m)]])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("deltas", [(0.0, 0.0), (0.3, 0.0), (0.0, 1e-4), (2.0, 1e-2)])
def test_inertia_verdict_and_solve_match_dense(seed, deltas):
    rng = np.random.default_rng(seed)
    nx, m, ne = 7, 4, 3
    data, Wfull, A = _system(rng, nx, m, ne, hess_scale=0.3)
    nw = nx + m + ne
    k = CondensedKKT(nw, m, nx, data["hr"], data["hc"], data["jr"], data["jc"],
                     make_linear_solver("qdldl"))
    aug = AugmentedKKT(nw, m, data["hr"], data["hc"], data["jr"], data["jc"],
                       make_linear_solver("qdldl"))
    for sys_ in (k, aug):
        _load(sys_, data)
        sys_.delta_w, sys_.delta_c = deltas
        sys_.build()
    K = _dense(Wfull, A, data["sigma"], *deltas)
    ev = np.linalg.eigvalsh(K)
    inertia_ok = ((ev > 1e-12).sum(), (ev < -1e-12).sum()) == (nw, m)
    fact, ok = k.factorize()
    _, ok_aug = aug.factorize()
    assert ok == inertia_ok == ok_aug
    if ok:
        assert fact.inertia == (nx, 0, 0)
        b = rng.standard_normal(nw + m)
        dw, dy = k.solve(b[:nw], b[nw:])
        ref = np.linalg.solve(K, b)
        x = np.r_[dw, dy]
        assert np.max(np.abs(x - ref)) <= 1e-10 * max(1.0, np.max(np.abs(ref)))
        assert k.last_residual_ratio <= 1e-10
        dwa, dya = aug.solve(b[:nw], b[nw:])
        np.testing.assert_allclose(np.r_[dwa, dya], x, rtol=1e-9, atol=1e-10)


def test_general_slack_coefficient_and_no_elastic_columns():
    rng = np.random.default_rng(11)
    nx, m = 6, 5
    data, Wfull, A = _system(rng, nx, m, 0, hess_scale=0.1, slack_coef=2.5)
    k = CondensedKKT(nx + m, m, nx, data["hr"], data["hc"], data["jr"], data["jc"],
                     make_linear_solver("qdldl"))
    _load(k, data)
    k.delta_w = 1.0
    k.build()
    fact, ok = k.factorize()
    assert ok
    K = _dense(Wfull, A, data["sigma"], 1.0, 0.0)
    b = rng.standard_normal(nx + 2 * m)
    dw, dy = k.solve(b[:nx + m], b[nx + m:])
    np.testing.assert_allclose(np.r_[dw, dy], np.linalg.solve(K, b), rtol=1e-10, atol=1e-12)


def test_indefinite_hessian_fails_the_inertia_test_until_delta_w():
    rng = np.random.default_rng(3)
    nx, m, ne = 6, 3, 2
    data, Wfull, A = _system(rng, nx, m, ne, hess_scale=0.0, free_row=False)
    data["hv"][:] = 0.0
    diag = np.flatnonzero(data["hr"] == data["hc"])
    data["hv"][diag[:nx]] = -10.0        # W = -10 I: negative curvature everywhere
    k = CondensedKKT(nx + m + ne, m, nx, data["hr"], data["hc"], data["jr"], data["jc"],
                     make_linear_solver("qdldl"))
    _load(k, data)
    k.build()
    fact, ok = k.factorize()
    assert not ok and fact.n_neg > 0
    K = _dense(Wfull - np.diag(np.r_[np.full(nx, 10.0), np.zeros(m + ne)]), A,
               data["sigma"], 0.0, 0.0)
    assert (np.linalg.eigvalsh(K) < 0).sum() > m           # the full matrix agrees
    k.delta_w = 1e3
    k.build()
    assert k.factorize()[1]


def test_structure_without_a_slack_per_row_is_refused():
    # an equality row without slack: w = [x], m = 1
    with pytest.raises(ValueError, match="slack"):
        CondensedKKT(2, 1, 2, [0], [0], [0, 0], [0, 1], make_linear_solver("qdldl"))
    # slack column of the wrong row
    with pytest.raises(ValueError, match="slack of row"):
        CondensedKKT(4, 2, 2, [0], [0], [0, 1, 1, 0], [0, 1, 2, 3],
                     make_linear_solver("qdldl"))


def test_options():
    from caspar_backend.errors import OptionError
    from caspar_backend.solver.options import resolve_options

    assert resolve_options(None).kkt_system == "augmented"
    with pytest.raises(OptionError, match="kkt_system"):
        resolve_options({"kkt_system": "lifted"})
    with pytest.raises(OptionError, match="equality_relax_factor"):
        resolve_options({"equality_relax_factor": 0.0})


def test_condensed_refuses_lbfgs_and_reports_itself():
    from caspar_backend.errors import OptionError
    from tests.solver.test_gpu_solver import _bounded_model

    prob = _bounded_model(20)
    with pytest.raises(OptionError, match="condensed"):
        prob.solve(print_level=0, kkt_system="condensed",
                   hessian_approximation="limited-memory")
    r = prob.solve(print_level=0, kkt_system="condensed")
    ra = prob.solve(print_level=0)
    assert r.success and r.extra["kkt_system"] == "condensed"
    assert ra.extra["kkt_system"] == "augmented"
    assert abs(r.f - ra.f) <= 1e-6 * max(1.0, abs(ra.f))
    # the relaxed equality (sum(x) = 1) is reported against the exact equality
    assert abs(r.g[-1] - 1.0) <= 1e-7


# ====================================================================== problem bank
pytest.importorskip("casadi")

from caspar_backend.solver.status import STATUSES  # noqa: E402
from tests.support import solver_harness as harness  # noqa: E402
from tests.support.assertions import assert_matches_ipopt  # noqa: E402
from tests.support.hs_extra import hs_extra  # noqa: E402
from tests.support.problem_bank import bank  # noqa: E402
from tests.support.solver_harness import run_caspar  # noqa: E402

PROBLEMS = {p.name: p for p in list(bank()) + list(hs_extra())}

#: name -> why caspar with kkt_system='condensed' and IPOPT disagree, as observed
KNOWN_MISMATCHES = {
    "hs013": "objective: IPOPT Solve_Succeeded 55 it f=0.99457854, caspar condensed "
             "Solved_To_Acceptable_Level 66 it f=0.99264922 (the degenerate cusp optimum; "
             "the augmented system reaches IPOPT's since its static term is bounded "
             "by the slacks' pivots)",
    "hs056": "iterations: IPOPT 10 without a restoration phase, caspar condensed 29 (the "
             "bound 2 n + 3 = 23): its line search fails at iteration 7 and the restoration "
             "phase (8r-10r, mu from 20 to 1e-5 in one update) returns at f = -50.9, "
             "inf_pr 17.8, far from the solution; the augmented system takes IPOPT's 10",
    "restoration_to_local_infeasibility_wb":
        "status: IPOPT Infeasible_Problem_Detected, caspar condensed Solve_Succeeded at the "
        "feasible minimizer (1, 0, 0.5), reached through soft restoration steps "
        "(tests/solver/test_linesearch.py: test_condensed_soft_restoration_finds_the_feasible_"
        "optimum_of_wb)",
}


def solved(name):
    return harness.solved(PROBLEMS[name], {"kkt_system": "condensed"})


def _params():
    out = []
    for p in PROBLEMS.values():
        marks = [pytest.mark.slow] if p.slow else []
        if p.name in KNOWN_MISMATCHES:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_MISMATCHES[p.name]))
        out.append(pytest.param(p.name, marks=marks, id=p.name))
    return out


@pytest.mark.parametrize("name", _params())
def test_condensed_against_ipopt(name):
    p = PROBLEMS[name]
    ri, rc = solved(name)
    assert rc.extra["kkt_system"] == "condensed"
    assert_matches_ipopt(p, ri, rc, bank_kind=False)
    if p.kind == "optimal" and STATUSES[ri["status"]].kind == "optimal":
        # a relaxed equality is met to its band (equality_relax_factor max(1, |b|) =
        # 1e-9 max(1, |b|)) plus the tolerance on the scaled residual
        d = p.build()
        eq = np.asarray(d["lbg"]) == np.asarray(d["ubg"])
        if eq.any():
            b = np.asarray(d["lbg"])[eq]
            assert np.all(np.abs(rc.g[eq] - b) <= 1e-7 * np.maximum(1.0, np.abs(b)))


# ====================================================================== on the GPU
GPU_BANK = ["hs006", "hs014", "hs071", "hs076", "equality_only_min_norm",
            "degenerate_duplicate_constraints", "fixed_variables", "needs_restoration_circle",
            "infeasible_disc_halfplane", "maratos", "optimal_control_200",
            "ring_inequalities"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_BANK)
def test_condensed_on_cuda_matches_cpu_and_ipopt(name):
    from caspar_backend.device import gpu_problem

    why = gpu_problem()
    if why is not None:
        pytest.skip(why)
    ri, rc = solved(name)
    p = PROBLEMS[name]
    d = dict(p.build(), options=p.options)
    rg = run_caspar(d, {"device": "cuda", "kkt_system": "condensed"})
    assert rg.extra["device"] == "cuda" and rg.extra["linear_solver"] == "cudss"
    assert rg.extra["kkt_system"] == "condensed"
    assert rg.kind == rc.kind == STATUSES[ri["status"]].kind, (rg.status, rg.message)
    if rg.kind == "optimal":
        for f_ref in (rc.f, ri["f"]):
            assert abs(rg.f - f_ref) <= 1e-6 * max(1.0, abs(f_ref)), (rg.f, f_ref)
    assert rg.iterations <= 2 * ri["iter"] + 3, (rg.iterations, ri["iter"])


def test_failed_refinement_raises_delta_w(monkeypatch):
    """A solve that refinement cannot make accurate means rounding fooled the inertia
    test of the condensed system: the method raises delta_w until solves are accurate
    (here: a stand-in that reports failure below delta_w = 1e-2)."""
    from tests.solver.test_gpu_solver import _bounded_model

    solve = CondensedKKT.solve

    def inaccurate_below(self, rhs_w, rhs_c):
        out = solve(self, rhs_w, rhs_c)
        if self.delta_w < 1e-2:
            self.last_residual_ratio = 1.0
        return out

    monkeypatch.setattr(CondensedKKT, "solve", inaccurate_below)
    r = _bounded_model(20).solve(print_level=0, kkt_system="condensed")
    assert r.success, r.message
    assert min(h.regularization for h in r.history[1:]) >= 1e-2
