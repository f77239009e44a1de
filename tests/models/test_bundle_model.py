"""The synthetic bundle-adjustment benchmark model (benchmarks/models/bundle.py) at
10 cameras / 50 points (200 observations, n = 240):

* caspar's objective, gradient and Hessian at x0 against CasADi's own evaluation
  of the same graph (and the assembled IPOPT ``hess_lag`` against CasADi's Hessian);
* caspar's optimum against IPOPT's (``casadi.nlpsol``, CasADi's own derivatives);
* the ``Function.map`` over observations compiles to ONE objective group whatever
  the size (no replayed instances, no constraint groups).
"""

from __future__ import annotations


import numpy as np
import pytest

ca = pytest.importorskip("casadi")

import caspar_backend as cb  # noqa: E402
from benchmarks.models.bundle import (  # noqa: E402
    _project_np,
    bundle_adjustment,
    bundle_adjustment_hessian,
    observation_functions,
    synthetic_scene,
)

NC, NP = 10, 50


@pytest.fixture(scope="module")
def small():
    nlp, args = bundle_adjustment(NC, NP)
    return nlp, args, cb.from_casadi(nlp, **args)


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


def test_scene_is_deterministic_and_consistent():
    s, t = synthetic_scene(NC, NP, seed=3), synthetic_scene(NC, NP, seed=3)
    for k in s:
        assert np.array_equal(s[k], t[k]), k
    assert s["cam_idx"].size == 4 * NP and np.bincount(s["cam_idx"]).min() >= 6
    # every point is seen by distinct cameras
    assert all(len(set(s["cam_idx"][4 * i:4 * i + 4])) == 4 for i in range(NP))
    # NumPy projection == CasADi residual at u = 0
    res, _ = observation_functions()
    k, i = s["cam_idx"], s["pt_idx"]
    e = np.asarray(res.map(k.size)(s["cams"][:, k], s["points"][:, i], np.zeros((2, k.size))))
    assert _rel(_project_np(s["cams"][:, k], s["points"][:, i]), e) < 1e-14
    with pytest.raises(ValueError):
        synthetic_scene(50, 10)                 # cameras seeing < 6 points


def test_gauge_fixed(small):
    nlp, args, _ = small
    fixed = np.flatnonzero(args["lbx"] == args["ubx"])
    assert fixed.size == 10 and list(fixed[:9]) == list(range(9)) and fixed[9] >= 9 * NC
    assert np.all(np.isinf(args["lbx"][args["lbx"] != args["ubx"]]))


def test_derivatives_match_casadi(small):
    nlp, args, P = small
    f = ca.Function("f", [nlp["x"], nlp["p"]],
                    [nlp["f"], ca.gradient(nlp["f"], nlp["x"])]).expand()
    f0, g0 = (np.asarray(v).ravel() for v in f(args["x0"], args["p"]))
    ev = P.evaluator("cpu")
    assert abs(ev.obj(args["x0"], p=args["p"]) - f0[0]) <= 1e-10 * abs(f0[0])
    assert _rel(ev.grad(args["x0"], p=args["p"]), g0) <= 1e-10

    # the Hessian: caspar's (both triangles) and the assembled hess_lag (upper
    # triangle) against CasADi's, at x0 with lam_f = 0.7
    Hc = ca.Function("H", [nlp["x"], nlp["p"]], [ca.hessian(nlp["f"], nlp["x"])[0]]).expand()
    H_ref = np.asarray(ca.densify(Hc(args["x0"], args["p"]))) * 0.7
    H_cb = ev.hess(args["x0"], np.zeros(0), 0.7, p=args["p"]).toarray()
    assert _rel(H_cb, H_ref) <= 1e-10
    H_ip = np.asarray(ca.densify(bundle_adjustment_hessian(NC, NP)(
        args["x0"], args["p"], 0.7, np.zeros(0))))
    assert np.all(np.tril(H_ip, -1) == 0)
    assert _rel(np.triu(H_ip) + np.triu(H_ip, 1).T, H_ref) <= 1e-10


def test_optimum_matches_ipopt(small, ipopt):
    nlp, args, P = small
    r = P.solve(tol=1e-8, print_level=0)
    ri = ipopt(nlp, args, {"tol": 1e-8}, expand=True)
    assert ri.success and r.status == "Solve_Succeeded"
    f_ip = ri.f
    assert abs(r.f - f_ip) <= 1e-6 * abs(f_ip)
    assert abs(r.iterations - ri.iterations) <= 3
    # the fit is at the noise level: 1/2 sum |e|^2 ~ 1/2 sigma^2 (2 n_obs - dof)
    assert r.f < 0.5 * 0.5 ** 2 * 2 * 4 * NP
    # ... and the assembled-Hessian IPOPT reaches the same point
    ri2 = ipopt(nlp, args, {"tol": 1e-8}, hess_lag=bundle_adjustment_hessian(NC, NP))
    assert abs(ri2.f - f_ip) <= 1e-9 * abs(f_ip)
    assert ri2.iterations == ri.iterations


@pytest.mark.parametrize("nc,npt", [(NC, NP), (20, 200)])
def test_map_is_one_objective_group(nc, npt):
    from caspar_backend.adapters.casadi import casadi_to_model

    nlp, args = bundle_adjustment(nc, npt)
    n_obs = 4 * npt
    m = casadi_to_model(nlp, **args)
    assert m.meta["map_blocks"] == [(f"map{n_obs}_ba_cost", n_obs, 0)]   # none replayed
    P = cb.Problem(m)
    assert [(g.kind, g.size) for g in P.groups] == [("objective", n_obs)]
    assert P.groups[0].var_table.shape == (12, n_obs)      # c_j (9) and X_i (3)
    assert P.groups[0].param_table.shape == (2, n_obs)     # the pixel u
